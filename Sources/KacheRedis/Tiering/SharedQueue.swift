import Foundation
import Kache
import NIOCore

/// A Queue kept in Redis, under the local Queue's rules: a FIFO of fixed
/// capacity; a push into a full Queue first drops items at the front whose
/// time is up, then, if still full, the oldest; `pop` returns the oldest live
/// item, skipping (and removing) expired ones.
///
/// One Redis list of records (`SharedTierRecord`, in `Kache`); each push and pop is one
/// Lua script, so concurrent instances never see a half-done step. Unlike the
/// local Queue, which sweeps every expired item on each insert, a push looks
/// only at the front: with one TTL for all items, those are the expired ones.
///
/// ```swift
/// let jobs = try cache.queue(named: "jobs", capacity: 1000)
/// try await jobs.push(job, ttl: .seconds(60))
/// while let next = try await jobs.pop() { run(next) }
/// ```
public struct SharedQueue: Sendable {
    /// The Queue's name.
    public let name: String
    /// The most items it holds.
    public let capacity: Int
    let client: RedisClusterClient
    let clock: any WallClock
    let compressionThreshold: Int
    let policy: RetryPolicy
    private let list: RESPArgument

    /// - Throws: `KacheError.invalidCapacity` for a capacity under 1, as the local Queue does.
    init(name: String, capacity: Int, prefix: String, client: RedisClusterClient, clock: any WallClock, compressionThreshold: Int, policy: RetryPolicy) throws(KacheError) {
        guard capacity > 0 else { throw .invalidCapacity(capacity) }
        self.name = name
        self.capacity = capacity
        self.client = client
        self.clock = clock
        self.compressionThreshold = compressionThreshold
        self.policy = policy
        list = RESPArgument("{\(prefix)queue:\(name)}:items")
    }

    /// Appends `data`, which expires `ttl` from now. A TTL that reaches past
    /// the year 2262 ends at the largest expiry, as in the local Queue.
    /// - Returns: how many items it dropped (expired ones, then the oldest).
    /// - Throws: `KacheError.invalidTTL` for a TTL that is not positive,
    ///   as the local Queue does (nothing is sent); a ``RedisClientError`` when Redis fails.
    @discardableResult
    public func push(_ data: Data, ttl: Duration) async throws -> Int {
        guard ttl > .zero else { throw KacheError.invalidTTL(ttl) }
        let now = clock.nanosecondsSince1970()
        let expiry = now.adding(nanoseconds: ttl.saturatingNanoseconds)
        let record = SharedTierRecord.encode(data, key: "item", space: name, kind: .queue, expiry: expiry, compressionThreshold: compressionThreshold)
        let reply = try await SharedTierScripts.queuePush.run(client, keys: [list], arguments: [
            RESPArgument(record), RESPArgument(Int64(capacity)), RESPArgument(now),
        ], policy: policy)
        return Int(reply.integer ?? 0)
    }

    /// Removes and returns the oldest live item, nil when there is none.
    public func pop() async throws(RedisClientError) -> Data? {
        let reply = try await SharedTierScripts.queuePop.run(client, keys: [list], arguments: [RESPArgument(clock.nanosecondsSince1970())], policy: policy)
        guard case let .bulkString(buffer) = reply, let record = try? SharedTierRecord.decode(Data(copying: buffer)) else { return nil }
        return record.value
    }

    /// Items held now (expired ones not yet skipped included).
    public func count() async throws(RedisClientError) -> Int {
        Int(try await client.send(RedisCommand(["LLEN", list], keyIndex: 1), policy: policy).integer ?? 0)
    }

    /// Removes every item.
    public func removeAll() async throws(RedisClientError) {
        try await client.send(RedisCommand(["DEL", list], keyIndex: 1), policy: policy)
    }
}
