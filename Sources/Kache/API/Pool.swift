import Foundation

extension Kache {
    /// A named key space of fixed capacity. Inserting a new key into a full
    /// Pool first sweeps expired keys, then evicts the key that expires
    /// earliest (of two expiring together, the one written first).
    ///
    /// A Pool is its own namespace: the same key in two Pools, or in a Pool and
    /// at the top level, names two entries.
    ///
    /// ```swift
    /// let avatars = try cache.pool(named: "avatars", capacity: 500)
    /// try avatars.set(png, forKey: userID, ttl: .seconds(86_400))
    /// let cached = avatars.data(forKey: userID)
    /// ```
    public struct Pool: Sendable {
        let cache: Kache
        let keySpace: KeySpace.Ref
        /// The key space's number in the index.
        var space: Int { keySpace.number }
        /// The Pool's name.
        public let name: String

        /// Stores `data` under `key` until `ttl` from now; a new key in a full
        /// Pool evicts the earliest-expiring one. Replacing a key evicts nothing.
        /// - Throws: as ``Kache/set(_:forKey:ttl:)-1nt6x``.
        /// - Complexity: O(log n) plus the file write, O(log n) per key swept or evicted.
        public func set(_ data: Data, forKey key: String, ttl: Duration) throws {
            try cache.put(data, key: key, keySpace: keySpace, ttl: ttl)
        }

        /// Stores `data` under `key` for the configuration's `defaultTTL`.
        public func set(_ data: Data, forKey key: String) throws {
            try cache.put(data, key: key, keySpace: keySpace, ttl: cache.configuration.defaultTTL)
        }

        /// The value stored under `key` in this Pool, or nil when there is none or it expired.
        public func data(forKey key: String) -> Data? {
            cache.fetch(keySpace: keySpace, key: key)
        }

        /// Whether `key` holds a live value in this Pool (no file is read).
        public func contains(_ key: String) -> Bool {
            let now = cache.clock.nanosecondsSince1970()
            return cache.store.withLock { $0.contains(space: space, key: key, now: now) }
        }

        /// Removes `key` from this Pool, and its file.
        public func removeValue(forKey key: String) {
            cache.remove(key: key, keySpace: keySpace)
        }

        /// Removes every key of this Pool.
        public func removeAll() {
            cache.changingFiles { cache.removeRecords(of: cache.store.withLock { $0.removeAll(space: space) }) }
        }

        /// Keys held now (expired ones not yet swept included).
        public var count: Int { cache.store.withLock { $0.spaces[space].count } }

        /// The most keys the Pool holds.
        public var capacity: Int { cache.store.withLock { $0.spaces[space].capacity } }

        /// The keys, earliest expiry first: the order in which they would be evicted.
        /// - Complexity: O(n log n)
        public var keys: [String] { cache.store.withLock { $0.keysByExpiry(space: space) } }

        /// Counts of this Pool.
        public var statistics: KeySpaceStatistics { cache.store.withLock { KeySpaceStatistics($0.spaces[space]) } }
    }

    /// The Pool named `name`, created with `capacity` if it does not exist yet
    /// (or restored as it was saved). A different capacity resizes it, evicting
    /// earliest-expiring keys if it shrinks.
    /// - Throws: ``KacheError/invalidKeySpaceName(_:reason:)`` for an empty
    ///   name, one over 255 bytes, or one that names a Queue;
    ///   ``KacheError/invalidCapacity(_:)`` for a capacity under 1.
    public func pool(named name: String, capacity: Int) throws -> Pool {
        let index = try keySpace(named: name, kind: .pool, capacity: capacity)
        return Pool(cache: self, keySpace: KeySpace.Ref(number: index, name: name, kind: .pool), name: name)
    }

    /// The Pool that is always there, named ``defaultPoolName``, with the
    /// configuration's `defaultPoolCapacity`.
    public var defaultPool: Pool {
        Pool(cache: self, keySpace: KeySpace.Ref(number: defaultPoolIndex, name: Kache.defaultPoolName, kind: .pool), name: Kache.defaultPoolName)
    }

    /// Counts of every key space: the top level, each Pool and each Queue.
    public var keySpaces: [KeySpaceStatistics] {
        store.withLock { $0.spaces.map(KeySpaceStatistics.init) }
    }

    func keySpace(named name: String, kind: KeySpace.Kind, capacity: Int) throws(KacheError) -> Int {
        guard !name.isEmpty else { throw .invalidKeySpaceName(name, reason: "it is empty") }
        guard name.utf8.count <= 255 else {
            throw .invalidKeySpaceName(String(name.prefix(40)) + "…", reason: "it is \(name.utf8.count) bytes long; the limit is 255")
        }
        guard capacity > 0 else { throw .invalidCapacity(capacity) }
        return try changingFiles { () throws(KacheError) -> Int in
            let (index, removals) = try store.withLock { state throws(KacheError) in
                guard !state.isClosed else { throw .closed }
                return try state.keySpace(named: name, kind: kind, capacity: capacity)
            }
            removeRecords(of: removals)
            return index
        }
    }
}

/// Counts of one key space, from ``Kache/Pool/statistics``,
/// ``Kache/Queue/statistics`` or ``Kache/keySpaces``.
public struct KeySpaceStatistics: Sendable, Equatable, Codable {
    /// What kind of key space it is.
    public enum Kind: String, Sendable, Codable {
        /// The top level of `set(_:forKey:ttl:)`: no capacity.
        case topLevel = "top-level"
        /// A Pool.
        case pool
        /// A Queue.
        case queue
    }

    /// The key space's name (empty for the top level).
    public var name: String
    /// Its kind.
    public var kind: Kind
    /// Entries held now.
    public var count: Int
    /// The most entries it holds (`Int.max` for the top level).
    public var capacity: Int
    /// Entries evicted by a full Pool or dropped by a full Queue.
    public var evictions: UInt64
    /// Entries removed because their time was up.
    public var expirations: UInt64
    /// Items pushed (Queues).
    public var pushes: UInt64
    /// Items popped (Queues).
    public var pops: UInt64

    init(_ space: KeySpace) {
        name = space.name
        kind = switch space.kind {
        case .topLevel: .topLevel
        case .pool: .pool
        case .queue: .queue
        }
        count = space.count
        capacity = space.capacity
        evictions = space.counters.evictions
        expirations = space.counters.expirations
        pushes = space.counters.pushes
        pops = space.counters.pops
    }
}
