import KacheStorage
import Foundation
import Kache
import Logging
import NIOCore
import Synchronization

/// A local `Kache` cache (memory and disk) in front of a Redis Cluster shared by
/// every instance of an application.
///
/// - `set` writes both tiers: the local cache, and Redis with
///   `SET key record PXAT expiry`, the same LZ4 record as the local file
///   (`SharedTierRecord`, in `Kache`) at the same absolute expiry.
/// - `data(forKey:)` asks the local tier, then Redis (filling the local tier
///   for the time the value has left), then answers nil.
/// - `removeValue(forKey:)` removes from both.
/// - When another instance sets or removes a key, Redis tells this one
///   (`CLIENT TRACKING … BCAST`), and the local copy is dropped. When
///   tracking of some slots lapsed, the local copies of keys in those slots
///   are dropped once it resumes; other keys keep theirs.
/// - With a client whose configuration reads from replicas, a local miss is
///   read from a replica once that replica has applied every change of the
///   key this instance heard of, else from the master.
///
/// Redis failing never makes a read throw: a read that can't reach it is
/// answered by the local tier, counted in ``statistics`` and logged once per
/// outage. Writes to Redis are best-effort unless the configuration requires them.
///
/// ```swift
/// let cache = try await TieredCache(local: Kache(directory: dir), seeds: ["127.0.0.1:7000"])
/// try await cache.set(data, forKey: "user:1", ttl: .seconds(300))
/// let value = await cache.data(forKey: "user:1")
/// ```
public final class TieredCache: Sendable {
    /// The local tier.
    public let local: Kache
    /// The shared tier's client.
    public let client: RedisClusterClient
    /// The settings this cache was opened with.
    public let configuration: TieredCacheConfiguration
    private let logger: Logger
    private let ownsClient: Bool

    private let localHits = Atomic<Int>(0)
    /// The local tier keeps no files (`memory` durability), so its
    /// synchronous read never waits on a disk. Kept here, not read from the
    /// local tier's configuration (a struct) on every get.
    private let localKeepsNoFiles: Bool
    private let counters = Locked(SharedTierStatistics())
    private let ledger = Locked(InvalidationLedger())
    private let isHealthy = Locked(true)
    /// Own writes whose invalidation came back, to check against Redis in batches.
    private let revalidations = Locked<(pending: [(key: String, checksum: UInt64)], isDraining: Bool)>(([], false))
    private let listener: InvalidationListener?
    /// Set when reads may go to replicas and invalidations are tracked.
    private let fence: ReplicaFence?

    /// Opens a tiered cache over `local` and the cluster `client` talks to,
    /// and starts tracking invalidations (when the configuration asks for it).
    /// Never fails because of Redis: an unreachable cluster is tracked once it answers.
    public convenience init(local: Kache, client: RedisClusterClient, configuration: TieredCacheConfiguration = TieredCacheConfiguration()) async {
        await self.init(local: local, client: client, configuration: configuration, ownsClient: false)
    }

    /// Opens a tiered cache over `local` and a new client for the cluster
    /// reachable at `seeds` (`"host:port"`), authenticated with `credentials`
    /// and over `tls` when given, as ``RedisClusterConfiguration`` takes them;
    /// ``close()`` shuts that client down.
    ///
    /// ```swift
    /// let cache = try await TieredCache(
    ///     local: Kache(directory: dir), seeds: ["redis.internal:6379"],
    ///     credentials: RedisCredentials(username: "cache", password: secret),
    ///     tls: try RedisTLSConfiguration(caBundlePath: "/etc/redis/ca.crt")
    /// )
    /// ```
    public convenience init(
        local: Kache, seeds: [String], credentials: RedisCredentials? = nil, tls: RedisTLSConfiguration? = nil,
        configuration: TieredCacheConfiguration = TieredCacheConfiguration()
    ) async throws(RedisClientError) {
        let nodes = seeds.compactMap { NodeAddress($0) }
        guard !nodes.isEmpty else { throw .topologyUnavailable(reason: "no seed of the form host:port among \(seeds)") }
        let client = RedisClusterClient(configuration: RedisClusterConfiguration(seeds: nodes, credentials: credentials, tls: tls))
        await self.init(local: local, client: client, configuration: configuration, ownsClient: true)
    }

    private init(local: Kache, client: RedisClusterClient, configuration: TieredCacheConfiguration, ownsClient: Bool) async {
        self.local = local
        localKeepsNoFiles = local.configuration.durability == .memory
        self.client = client
        self.configuration = configuration
        self.logger = client.configuration.logger
        self.ownsClient = ownsClient
        listener = configuration.tracksInvalidations ? InvalidationListener(
            client: client, prefix: configuration.keyPrefix, interval: configuration.trackingCheckInterval, logger: client.configuration.logger
        ) : nil
        fence = configuration.tracksInvalidations && client.configuration.readFrom == .replicaPreferred
            ? ReplicaFence(client: client, interval: configuration.trackingCheckInterval)
            : nil
        await startListening()
        await fence?.start(currentEpoch: { [weak self] in self?.ledger.withLock { $0.epoch } ?? .max })
    }

    private func startListening() async {
        guard listener != nil else { return }
        listener?.bind(
            onKeys: { [weak self] keys in self?.invalidate(keys) },
            onGap: { [weak self] slots, reason in self?.dropLocalCopies(in: slots, because: reason) }
        )
        await listener?.start()
    }

    /// Stops tracking invalidations (and shuts the client down if this cache created it).
    public func close() async {
        await fence?.stop()
        await listener?.stop()
        if ownsClient { await client.shutdown() }
    }

    /// Whether invalidations are being received from every master now.
    public var isTrackingInvalidations: Bool { listener?.isTrackingEveryMaster ?? false }

    /// Counts since the cache opened.
    public var statistics: SharedTierStatistics {
        var snapshot = counters.withLock { $0 }
        snapshot.localHits = localHits.load(ordering: .relaxed)
        return snapshot
    }

    // MARK: - Values

    /// Stores `data` under `key` until `ttl` from now, in the local tier and in Redis.
    /// - Throws: ``TieredCacheError/local(_:)`` when the local tier refuses the
    ///   value (nothing is sent to Redis then); ``TieredCacheError/sharedTier(_:)``
    ///   when Redis fails and writes are ``TieredCacheConfiguration/WritePolicy/required``.
    public func set(_ data: Data, forKey key: String, ttl: Duration) async throws(TieredCacheError) {
        // One reading of the clock for both tiers, so that they end at the same nanosecond.
        let now = local.configuration.clock.nanosecondsSince1970()
        let expiry = now.adding(nanoseconds: ttl.saturatingNanoseconds)
        do {
            try await local.set(data, forKey: key, ttl: ttl, now: now)
        } catch {
            throw .local(error)
        }
        let record = SharedTierRecord.encode(data, key: key, expiry: expiry, compressionThreshold: configuration.compressionThreshold)
        let checksum = Self.checksum(of: record)
        ledger.withLock { $0.noteOwnWrite(key, checksum: checksum) }
        let command = RedisCommand(
            ["SET", RESPArgument(configuration.keyPrefix + key), RESPArgument(record), "PXAT", RESPArgument(Self.milliseconds(ceilingOf: expiry))],
            keyIndex: 1
        )
        do throws(RedisClientError) {
            try await client.send(command, policy: configuration.writePolicy)
            // Run by the master now: a replica must reach it before it answers for this key.
            ledger.withLock { $0.noteChange(key) }
            noteHealthy()
        } catch {
            ledger.withLock { $0.forgetOwnWrite(key) }
            try noteWriteFailure(error, key: key)
        }
    }

    /// The value of `key`: from the local tier, else from Redis (then kept
    /// locally for the time it has left), else nil. Never throws: when Redis
    /// can't answer within the read policy, the answer is the local tier's.
    ///
    /// A hit in a local tier kept in memory is answered on the caller's own
    /// executor, with no hop; a local tier's file and Redis are read off it.
    public nonisolated(nonsending) func data(forKey key: String) async -> Data? {
        // Nonsending, so that a caller on an actor isn't taken to the global
        // executor and back (two job switches) for a read of memory; and on
        // SwiftNIO's loops installed as the global executor, where every call
        // to a plain `async` function is a job on the loop, that switch made
        // local hits 4× slower (W2 of `kache-bench run --tier redis
        // --redis-executor nio`). Memory is read with no async call at all,
        // whose frame a task would allocate and free on every hit.
        if localKeepsNoFiles, let value = Self.readMemory(of: local, key: key) {
            localHits.add(1, ordering: .relaxed)
            return value
        }
        return await dataBeyondMemory(forKey: key)
    }

    /// `data(forKey:)` past the local tier's memory: its files, then Redis.
    /// Concurrent, so that the wait for them, the record's decoding and the
    /// local copy's write don't run on the caller's actor.
    @concurrent private func dataBeyondMemory(forKey key: String) async -> Data? {
        if !localKeepsNoFiles, let value = await local.data(forKey: key) {
            localHits.add(1, ordering: .relaxed)
            return value
        }
        let (epoch, lastChange) = ledger.withLock { ($0.epoch, $0.lastChange(of: key)) }
        let reply: RESPValue
        do throws(RedisClientError) {
            reply = try await client.send(
                RedisCommand(["GET", RESPArgument(configuration.keyPrefix + key)], keyIndex: 1, isReadOnly: true),
                policy: configuration.readPolicy,
                replicaAllowed: { [fence] replica in fence?.allows(replica, lastChange: lastChange) ?? true }
            )
            noteHealthy()
        } catch {
            noteReadFailure(error)
            return nil
        }
        guard case let .bulkString(buffer) = reply else {
            counters.withLock { $0.misses += 1 }
            return nil
        }
        let record: SharedTierRecord
        do {
            record = try SharedTierRecord.decode(Data(copying: buffer))
        } catch {
            counters.withLock { $0.damagedRecords += 1 }
            logger.warning("Kache read a damaged record for \(key) from Redis: \(error)")
            return nil
        }
        guard record.key == key || record.key == key.precomposedStringWithCanonicalMapping, record.kind == .topLevel else {
            counters.withLock { $0.damagedRecords += 1 }
            return nil
        }
        let now = local.configuration.clock.nanosecondsSince1970()
        let remaining = record.expiry - now
        guard remaining > 0 else {
            counters.withLock { $0.misses += 1 }
            return nil
        }
        counters.withLock { $0.sharedHits += 1 }
        // From the same reading, so that the copy ends when the record does.
        if (try? await local.set(record.value, forKey: key, ttl: .nanoseconds(remaining), now: now)) != nil,
           ledger.withLock({ $0.wasInvalidated(key, since: epoch) })
        {
            // Changed while we read it: what we read may be the old value.
            await local.removeValue(forKey: key)
        }
        return record.value
    }

    /// `cache`'s synchronous read: called from a synchronous function, where
    /// Swift picks it over the `async` overload.
    private static func readMemory(of cache: Kache, key: String) -> Data? {
        cache.data(forKey: key)
    }

    /// Removes `key` from both tiers.
    /// - Throws: ``TieredCacheError/sharedTier(_:)`` when Redis fails and writes are required.
    public func removeValue(forKey key: String) async throws(TieredCacheError) {
        await local.removeValue(forKey: key)
        ledger.withLock { state in
            state.forgetOwnWrite(key)
            state.noteChange(key)
        }
        do throws(RedisClientError) {
            try await client.send(RedisCommand(["DEL", RESPArgument(configuration.keyPrefix + key)], keyIndex: 1), policy: configuration.writePolicy)
            ledger.withLock { $0.noteChange(key) }
            noteHealthy()
        } catch {
            try noteWriteFailure(error, key: key)
        }
    }

    // MARK: - Pools and Queues

    /// The Pool named `name` in Redis, holding at most `capacity` keys.
    /// - Throws: `KacheError.invalidCapacity` for a capacity under 1, as `Kache.pool(named:capacity:)` does.
    public func pool(named name: String, capacity: Int) throws(KacheError) -> SharedPool {
        try SharedPool(name: name, capacity: capacity, prefix: configuration.keyPrefix, client: client,
                       clock: local.configuration.clock, compressionThreshold: configuration.compressionThreshold, policy: configuration.writePolicy)
    }

    /// The Queue named `name` in Redis, holding at most `capacity` items.
    /// - Throws: `KacheError.invalidCapacity` for a capacity under 1, as `Kache.queue(named:capacity:)` does.
    public func queue(named name: String, capacity: Int) throws(KacheError) -> SharedQueue {
        try SharedQueue(name: name, capacity: capacity, prefix: configuration.keyPrefix, client: client,
                        clock: local.configuration.clock, compressionThreshold: configuration.compressionThreshold, policy: configuration.writePolicy)
    }

    // MARK: - Coherence

    /// Drops the local copies of keys another instance changed. A key this
    /// instance wrote itself is checked against Redis first (see ``InvalidationLedger``).
    private func invalidate(_ keys: [String]?) {
        guard let keys else {
            flushLocal(because: "a Redis node was flushed")
            return
        }
        for key in keys {
            let own = ledger.withLock { $0.noteInvalidation(key) }
            counters.withLock { $0.invalidationsReceived += 1 }
            if let own {
                scheduleRevalidation(key, ownChecksum: own)
            } else {
                drop(key)
            }
        }
    }

    private func drop(_ key: String) {
        local.removeValue(forKey: key)
        counters.withLock { $0.localCopiesDropped += 1 }
        configuration.onInvalidation?(key)
    }

    private func scheduleRevalidation(_ key: String, ownChecksum: UInt64) {
        let start = revalidations.withLock { state in
            state.pending.append((key, ownChecksum))
            defer { state.isDraining = true }
            return !state.isDraining
        }
        if start { Task { await self.drainRevalidations() } }
    }

    /// Keeps the local copy of a key this instance wrote only if Redis still
    /// holds that very record; asks for up to 256 keys in one pipeline.
    private func drainRevalidations() async {
        while true {
            let batch: [(key: String, checksum: UInt64)] = revalidations.withLock { state in
                let batch = Array(state.pending.prefix(256))
                state.pending.removeFirst(batch.count)
                if batch.isEmpty { state.isDraining = false }
                return batch
            }
            guard !batch.isEmpty else { return }
            let replies = await client.pipeline(
                batch.map { RedisCommand(["GET", RESPArgument(configuration.keyPrefix + $0.key)], keyIndex: 1) },
                policy: configuration.readPolicy
            )
            for (item, reply) in zip(batch, replies) {
                switch reply {
                case let .success(.bulkString(buffer)) where Self.checksum(of: Data(copying: buffer)) == item.checksum:
                    counters.withLock { $0.ownWritesChecked += 1 }
                case .success:
                    drop(item.key)
                    counters.withLock { $0.ownWritesChecked += 1 }
                case let .failure(error):
                    // Redis can't say (down, failing over): keep serving the copy, as
                    // during any outage; tracking starts again on a new master with
                    // the local tier emptied.
                    noteReadFailure(error)
                }
            }
        }
    }

    private func flushLocal(because reason: String) {
        ledger.withLock { $0.noteEverythingInvalidated() }
        local.removeAll()
        counters.withLock { $0.localFlushes += 1 }
        logger.warning("Kache emptied its local tier: \(reason), so changes made elsewhere may have been missed")
    }

    /// Drops the local copies of keys in `slots`, whose changes may have been
    /// missed while their tracking lapsed; copies of other slots stay.
    ///
    /// The slot of each local key is computed from the key (CRC16 of prefix
    /// and key) in one pass over the local index, rather than kept in an
    /// index of our own: that covers every entry the local tier holds, however
    /// it got there (a fill, a set, an earlier run of the process), with no
    /// second structure to keep in step, and costs O(n) only when a gap ends.
    /// The ledger is told first, so a fill in flight that read before the
    /// drop is undone rather than left behind it.
    private func dropLocalCopies(in slots: SlotSet, because reason: String) {
        ledger.withLock { $0.noteEverythingInvalidated() }
        let prefix = configuration.keyPrefix
        let dropped = local.removeValues { key in slots.contains(HashSlot(key: prefix + key)) }
        counters.withLock {
            $0.trackingGaps += 1
            $0.localCopiesDroppedAfterGaps += dropped
        }
        logger.warning("Kache dropped \(dropped) local copies: \(reason), so changes to them made meanwhile may have been missed")
    }

    // MARK: - Faults

    private func noteHealthy() {
        guard !isHealthy.withLock({ $0 }) else { return }
        let changed = isHealthy.withLock { healthy in
            defer { healthy = true }
            return !healthy
        }
        if changed { logger.info("Kache's shared tier answers again") }
    }

    private func noteReadFailure(_ error: RedisClientError) {
        counters.withLock { $0.readErrors += 1 }
        noteUnhealthy(error)
    }

    private func noteWriteFailure(_ error: RedisClientError, key: String) throws(TieredCacheError) {
        counters.withLock { $0.writeErrors += 1 }
        noteUnhealthy(error)
        if configuration.writes == .required { throw .sharedTier(error) }
    }

    private func noteUnhealthy(_ error: RedisClientError) {
        if case .server = error {
            logger.warning("Redis refused a command of Kache's shared tier: \(error)")
            return
        }
        let changed = isHealthy.withLock { healthy in
            defer { healthy = false }
            return healthy
        }
        if changed { logger.warning("Kache's shared tier is unavailable (\(error)); serving from the local tier alone") }
    }

    // MARK: - Helpers

    /// The record's XXH64 checksum field (bytes 4 ..< 12), 0 for a short record.
    static func checksum(of record: Data) -> UInt64 {
        guard record.count >= 12 else { return 0 }
        return record.withUnsafeBytes { UInt64(littleEndian: $0.loadUnaligned(fromByteOffset: 4, as: UInt64.self)) }
    }

    /// Nanoseconds rounded up to whole milliseconds (Redis's PXAT unit): Redis
    /// never drops a value before the record's own expiry, which reads check.
    static func milliseconds(ceilingOf nanoseconds: Int64) -> Int64 {
        nanoseconds / 1_000_000 + (nanoseconds % 1_000_000 > 0 ? 1 : 0)
    }
}
