import Foundation
import KacheStorage

extension Kache {
    /// A named FIFO of fixed capacity. `push` appends; when the Queue is full
    /// the oldest item is dropped. `pop` returns and removes the oldest live
    /// item, skipping (and removing) expired ones.
    ///
    /// Items are entries like any other: compressed files on disk, fronted by memory.
    ///
    /// ```swift
    /// let uploads = try cache.queue(named: "uploads", capacity: 100)
    /// try uploads.push(request, ttl: .seconds(600))
    /// while let next = uploads.pop() { send(next) }
    /// ```
    public struct Queue: Sendable {
        let cache: Kache
        let keySpace: KeySpace.Ref
        /// The key space's number in the index.
        var space: Int { keySpace.number }
        /// The Queue's name.
        public let name: String

        /// Appends `data`, which expires `ttl` from now; drops the oldest item when full.
        /// - Throws: ``KacheError/valueTooLarge(bytes:limit:)``, ``KacheError/invalidTTL(_:)``,
        ///   and file errors as ``Kache/set(_:forKey:ttl:)-1nt6x``.
        /// - Complexity: O(log n) plus the file write.
        public func push(_ data: Data, ttl: Duration) throws {
            try cache.push(data, keySpace: keySpace, ttl: ttl)
        }

        /// Appends `data` for the configuration's `defaultTTL`.
        public func push(_ data: Data) throws {
            try cache.push(data, keySpace: keySpace, ttl: cache.configuration.defaultTTL)
        }

        /// Removes and returns the oldest live item, or nil when there is none.
        /// - Complexity: O(1) amortized, plus a file read when the item is not in memory.
        public func pop() -> Data? {
            cache.pop(keySpace: keySpace, remove: true)
        }

        /// The oldest live item, left in the Queue.
        public func peek() -> Data? {
            cache.pop(keySpace: keySpace, remove: false)
        }

        /// Items held now (expired ones not yet swept included).
        public var count: Int { cache.store.withLock { $0.spaces[space].count } }

        /// The most items the Queue holds.
        public var capacity: Int { cache.store.withLock { $0.spaces[space].capacity } }

        /// Removes every item.
        public func removeAll() {
            cache.changingFiles { cache.removeRecords(of: cache.store.withLock { $0.removeAll(space: space) }) }
        }

        /// Counts of this Queue.
        public var statistics: KeySpaceStatistics { cache.store.withLock { KeySpaceStatistics($0.spaces[space]) } }
    }

    /// The Queue named `name`, created with `capacity` if it does not exist yet
    /// (or restored as it was saved). A different capacity resizes it, dropping
    /// the oldest items if it shrinks.
    /// - Throws: ``KacheError/invalidKeySpaceName(_:reason:)`` for an empty
    ///   name, one over 255 bytes, or one that names a Pool;
    ///   ``KacheError/invalidCapacity(_:)`` for a capacity under 1.
    public func queue(named name: String, capacity: Int) throws -> Queue {
        let index = try keySpace(named: name, kind: .queue, capacity: capacity)
        return Queue(cache: self, keySpace: KeySpace.Ref(number: index, name: name, kind: .queue), name: name)
    }

    /// The Queue that is always there, named ``defaultQueueName``, with the
    /// configuration's `defaultQueueCapacity`.
    public var defaultQueue: Queue {
        Queue(cache: self, keySpace: KeySpace.Ref(number: defaultQueueIndex, name: Kache.defaultQueueName, kind: .queue), name: Kache.defaultQueueName)
    }

    func push(_ data: Data, keySpace: KeySpace.Ref, ttl: Duration) throws {
        // A Queue item's key is a sequence number reserved for it (taken and
        // bumped under the lock, so no two pushes share one). Queue order is the
        // order of the inserts themselves, kept by the Queue and by file sequences.
        let key = String(store.withLock { state in
            defer { state.nextSequence += 1 }
            return state.nextSequence
        })
        try put(data, key: key, keySpace: keySpace, ttl: ttl)
        queueWaiters.notePush(space: keySpace.number)
    }

    func pop(keySpace: KeySpace.Ref, remove: Bool) -> Data? {
        changingFiles { takeOldest(keySpace: keySpace, remove: remove) }
    }

    private func takeOldest(keySpace: KeySpace.Ref, remove: Bool) -> Data? {
        let space = keySpace.number
        while true {
            let now = clock.nanosecondsSince1970()
            if !remove {
                let oldest = store.withLock { state -> (key: String, sequence: UInt64, expiry: Timestamp)? in
                    guard !state.isClosed, let ref = state.spaces[space].oldest(index: state.index),
                          let (_, key, record) = state.index.entry(ref) else { return nil }
                    return (key, record.sequence, record.expiry)
                }
                guard let oldest else { return nil }
                if oldest.expiry <= now {
                    removeRecords(of: store.withLock { $0.sweep(now: now) })
                    continue
                }
                if let value = fetch(keySpace: keySpace, key: oldest.key, insideChange: true) { return value }
                // The file could not be read for now (it is still there): a miss, not a loop.
                if store.withLock({ $0.isCurrent(space: space, key: oldest.key, sequence: oldest.sequence) }) { return nil }
                continue
            }
            // The item's segment file is taken with it: reclaiming may delete the file once the item is out.
            let (taken, file) = store.withLock { state -> (StoreState.Pop, SegmentStore.SegmentFile?) in
                let taken = state.popOldest(space: space, now: now)
                guard let location = taken.item?.removal.record.location else { return (taken, nil) }
                return (taken, records?.segmentFile(for: location))
            }
            removeRecords(of: taken.expired)
            guard let (removal, value) = taken.item else { return nil }
            if let value {
                removeRecords(of: [removal])
                return value
            }
            // Only in its file: read it before the file is scheduled for deletion.
            switch readRemoved(removal, file: file) {
            case let .value(data):
                removeRecords(of: [removal])
                return data
            case .gone:
                removeRecords(of: [removal])
            case .unreadable:
                // Not damage: the item goes back in its place, its file kept, and the pop is a miss.
                _ = store.withLock { $0.reinstate(removal) }
                return nil
            }
        }
    }

    private enum RemovedRead {
        case value(Data)
        /// Missing, damaged (and quarantined) or another version: nothing to deliver.
        case gone
        /// The file could not be read now, for a reason other than its bytes.
        case unreadable
    }

    /// Reads the file of an entry already taken out of the index (a popped
    /// Queue item). Call inside `changingFiles`.
    private func readRemoved(_ removal: Removal, file: SegmentStore.SegmentFile?) -> RemovedRead {
        guard let records else { return .gone }
        let name = EntryName(space: removal.spaceName, key: removal.key)
        guard let location = removal.record.location else { return .gone }
        switch records.readRecord(name, at: location, in: file, maximumLength: maximumFileLength) {
        case let .entry(header, payload) where header.sequence == removal.sequence:
            store.withLock { $0.counters.diskHits += 1 }
            return .value(payload)
        case let .damaged(damage, inode):
            quarantineDamaged(name, at: location, inode: inode, damage: damage, records: records)
            return .gone
        case let .unreadable(code):
            noteUnreadable(name, errno: code)
            return .unreadable
        case .entry, .missing:
            return .gone
        }
    }
}
