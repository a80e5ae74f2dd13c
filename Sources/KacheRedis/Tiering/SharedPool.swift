import Foundation
import Kache
import NIOCore

/// A Pool kept in Redis, under the local Pool's rules: a fixed capacity;
/// inserting a new key into a full Pool first sweeps expired keys, then
/// evicts the key that expires earliest (of equal expiries, the one set first).
///
/// Four keys under one hash tag, so one node holds them and one Lua script
/// changes them atomically: a sorted set of members scored by expiry (in
/// microseconds, exact in a double until the year 2255), each member a
/// zero-padded write sequence followed by the key, so that equal expiries
/// order by write; a hash of the records (`SharedTierRecord`, in `Kache`); a hash from
/// key to member; the sequence counter.
///
/// ```swift
/// let avatars = try cache.pool(named: "avatars", capacity: 500)
/// let removed = try await avatars.set(png, forKey: userID, ttl: .seconds(86_400))
/// let cached = try await avatars.data(forKey: userID)
/// ```
public struct SharedPool: Sendable {
    /// The keys one `set` removed.
    public struct Removed: Sendable, Equatable {
        /// Keys swept because their time was up, earliest first.
        public var expired: [String]
        /// Keys evicted to make room (at most one).
        public var evicted: [String]
    }

    /// The Pool's name.
    public let name: String
    /// The most keys it holds.
    public let capacity: Int
    let client: RedisClusterClient
    let clock: any WallClock
    let compressionThreshold: Int
    let policy: RetryPolicy
    private let keys: [RESPArgument]

    /// - Throws: `KacheError.invalidCapacity` for a capacity under 1, as the local Pool does.
    init(name: String, capacity: Int, prefix: String, client: RedisClusterClient, clock: any WallClock, compressionThreshold: Int, policy: RetryPolicy) throws(KacheError) {
        guard capacity > 0 else { throw .invalidCapacity(capacity) }
        self.name = name
        self.capacity = capacity
        self.client = client
        self.clock = clock
        self.compressionThreshold = compressionThreshold
        self.policy = policy
        let tag = "{\(prefix)pool:\(name)}"
        keys = ["order", "values", "members", "sequence"].map { RESPArgument("\(tag):\($0)") }
    }

    /// Stores `data` under `key` until `ttl` from now, by the Pool's rules, in one atomic step.
    /// A TTL that reaches past the year 2262 ends at the largest expiry, as in the local Pool.
    /// - Returns: the keys it swept and evicted.
    /// - Throws: `KacheError.invalidTTL` for a TTL that is not positive,
    ///   as the local Pool does (nothing is sent); a ``RedisClientError`` when Redis fails.
    @discardableResult
    public func set(_ data: Data, forKey key: String, ttl: Duration) async throws -> Removed {
        guard ttl > .zero else { throw KacheError.invalidTTL(ttl) }
        let now = clock.nanosecondsSince1970()
        return try await set(data, forKey: key, expiry: now.adding(nanoseconds: ttl.saturatingNanoseconds), now: now)
    }

    /// Stores `data` under `key` until the absolute `expiry` (ns since 1970), `now` being the time of the set.
    @discardableResult
    public func set(_ data: Data, forKey key: String, expiry: Int64, now: Int64) async throws(RedisClientError) -> Removed {
        let record = SharedTierRecord.encode(data, key: key, space: name, kind: .pool, expiry: expiry, compressionThreshold: compressionThreshold)
        let reply = try await SharedTierScripts.poolSet.run(client, keys: keys, arguments: [
            RESPArgument(key), RESPArgument(record),
            RESPArgument(Self.microseconds(expiry)), RESPArgument(Self.microseconds(now)), RESPArgument(Int64(capacity)),
        ], policy: policy)
        guard let parts = reply.elements, parts.count == 2, let expired = parts[0].elements, let evicted = parts[1].elements else {
            throw .unexpectedReply(command: "pool set", reply: reply)
        }
        return Removed(expired: expired.compactMap(\.string), evicted: evicted.compactMap(\.string))
    }

    /// The value of `key`, nil when the Pool does not hold it or it expired.
    public func data(forKey key: String) async throws(RedisClientError) -> Data? {
        let reply = try await client.send(RedisCommand(["HGET", keys[1], RESPArgument(key)], keyIndex: 1), policy: policy)
        guard case let .bulkString(buffer) = reply, let record = try? SharedTierRecord.decode(Data(copying: buffer)),
              record.expiry > clock.nanosecondsSince1970() else { return nil }
        return record.value
    }

    /// Removes `key` from the Pool.
    public func removeValue(forKey key: String) async throws(RedisClientError) {
        _ = try await SharedTierScripts.poolRemove.run(client, keys: keys, arguments: [RESPArgument(key)], policy: policy)
    }

    /// The keys, earliest expiry first: the order in which they would be evicted.
    public func keysByExpiry() async throws(RedisClientError) -> [String] {
        let reply = try await client.send(RedisCommand(["ZRANGE", keys[0], "0", "-1"], keyIndex: 1), policy: policy)
        return (reply.elements ?? []).compactMap { $0.string.map { String($0.dropFirst(SharedTierScripts.sequenceDigits)) } }
    }

    /// Keys held now (expired ones not yet swept included).
    public func count() async throws(RedisClientError) -> Int {
        Int(try await client.send(RedisCommand(["ZCARD", keys[0]], keyIndex: 1), policy: policy).integer ?? 0)
    }

    /// Removes the Pool and everything in it.
    public func removeAll() async throws(RedisClientError) {
        try await client.send(RedisCommand(["DEL"] + keys, keyIndex: 1), policy: policy)
    }

    static func microseconds(_ nanoseconds: Int64) -> Int64 { nanoseconds / 1000 }
}
