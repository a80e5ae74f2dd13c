import KacheStorage

/// Decides when a replica may answer a tiered read of a key: once it has
/// applied every change of that key this instance has heard of.
///
/// Why it is needed: a master sends the invalidation of a write as it runs
/// the write, and its replicas apply it a moment later (replication is
/// asynchronous). A read sent to a replica right after the invalidation
/// arrived could fetch the old value and fill the local tier with it, and no
/// further invalidation would come to drop it.
///
/// How: every change the tiered cache hears of (an invalidation, its own
/// write or removal, a tracking gap) raises the ``InvalidationLedger``'s
/// epoch. Every `interval`, when the epoch rose past what the replicas have
/// settled, the fence reads the epoch E and then asks each master for its
/// replication offset (`INFO replication`, `master_repl_offset`). The
/// master ran every write whose invalidation had arrived by E, so that
/// offset covers them all. Each replica is then asked for the offset it has
/// applied (`slave_repl_offset`, with its link to that master up); at or past
/// its master's offset, the replica has *settled* E, and a key whose last
/// change is at or before E may be read from it. A replica keeps its target
/// until it reaches it, so a replica under steady writes still settles. A
/// replica not settled yet, or one that serves another master than the one
/// it settled with, is not read from: the master answers.
///
/// It runs only with ``ReadPreference/replicaPreferred`` and tracking on.
final class ReplicaFence: Sendable {
    private let client: RedisClusterClient
    private let interval: Duration

    /// The offset a replica must reach to settle `epoch`.
    private struct Target {
        var master: NodeAddress
        var epoch: UInt64
        var offset: Int64
    }

    private struct State {
        /// Per replica: the master it settled with, and the epoch it settled.
        var settled: [NodeAddress: (master: NodeAddress, epoch: UInt64)] = [:]
        var targets: [NodeAddress: Target] = [:]
        var loop: Task<Void, Never>?
        var isStopped = false
    }

    private let state = Locked(State())

    init(client: RedisClusterClient, interval: Duration) {
        self.client = client
        self.interval = interval
    }

    /// Whether `replica` has applied every change up to `lastChange`.
    func allows(_ replica: NodeAddress, lastChange: UInt64) -> Bool {
        state.withLock { $0.settled[replica].map { $0.epoch >= lastChange } ?? false }
    }

    /// Checks once now, then every `interval` in the background, against
    /// the ledger's epoch as `currentEpoch` reads it.
    func start(currentEpoch: @escaping @Sendable () -> UInt64) async {
        await check(epoch: currentEpoch())
        let task = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                try? await Task.sleep(for: self.interval)
                guard !self.state.withLock({ $0.isStopped }) else { return }
                await self.check(epoch: currentEpoch())
            }
        }
        state.withLock { $0.loop = task }
    }

    func stop() async {
        let loop = state.withLock { state in
            state.isStopped = true
            return state.loop
        }
        loop?.cancel()
        _ = await loop?.value
    }

    /// One round: new targets for replicas behind `epoch` (read just
    /// before), then each replica with a target asked how far it has applied.
    func check(epoch: UInt64) async {
        let map = client.slotMap
        var masterOf: [NodeAddress: NodeAddress] = [:]
        for shard in map.shards {
            for replica in shard.replicas { masterOf[replica] = shard.master }
        }
        let needingTarget: [NodeAddress] = state.withLock { state in
            for replica in Array(state.settled.keys) where masterOf[replica] != state.settled[replica]?.master {
                state.settled[replica] = nil
            }
            for replica in Array(state.targets.keys) where masterOf[replica] != state.targets[replica]?.master {
                state.targets[replica] = nil
            }
            return masterOf.keys.filter { replica in
                state.targets[replica] == nil && (state.settled[replica]?.epoch).map { $0 < epoch } ?? true
            }
        }
        // Asked after the epoch was read: the offset covers every write whose invalidation had arrived.
        var offsets: [NodeAddress: Int64] = [:]
        for master in Set(needingTarget.compactMap { masterOf[$0] }) {
            if let offset = await info(of: master).flatMap({ Self.field("master_repl_offset", in: $0) }).flatMap({ Int64($0) }) {
                offsets[master] = offset
            }
        }
        let targets: [NodeAddress: Target] = state.withLock { state in
            for replica in needingTarget {
                guard let master = masterOf[replica], let offset = offsets[master] else { continue }
                state.targets[replica] = Target(master: master, epoch: epoch, offset: offset)
            }
            return state.targets
        }
        for (replica, target) in targets {
            guard let info = await info(of: replica), Self.isReplica(info, of: target.master),
                  let applied = Self.field("slave_repl_offset", in: info).flatMap({ Int64($0) }), applied >= target.offset
            else { continue }
            state.withLock { state in
                guard state.targets[replica]?.epoch == target.epoch else { return }
                state.targets[replica] = nil
                if (state.settled[replica]?.epoch).map({ $0 < target.epoch }) ?? true {
                    state.settled[replica] = (target.master, target.epoch)
                }
            }
        }
    }

    private func info(of node: NodeAddress) async -> String? {
        do throws(RedisClientError) {
            return try await client.pool(for: node).connection().send(["INFO", "replication"]).string
        } catch {
            return nil
        }
    }

    /// Whether `INFO replication` of a node says it replicates `master` with its link up.
    static func isReplica(_ info: String, of master: NodeAddress) -> Bool {
        field("role", in: info) == "slave" && field("master_link_status", in: info) == "up"
            && field("master_host", in: info) == master.host && field("master_port", in: info) == String(master.port)
    }

    /// The value of `name` in `INFO` text (`name:value` lines).
    static func field(_ name: String, in info: String) -> String? {
        for line in info.split(whereSeparator: \.isNewline) where line.hasPrefix(name + ":") {
            return String(line.dropFirst(name.count + 1))
        }
        return nil
    }
}
