import KacheStorage
import Logging
import NIOCore
import NIOPosix
import Synchronization

/// A client for Redis Cluster: routes each command to the master of its
/// key's slot, pipelines commands on a few connections per node, and follows
/// the cluster as it changes.
///
/// - `MOVED`: the slot is recorded at its new node, a topology refresh starts,
///   and the command goes to the new node.
/// - `ASK`: the command is sent once to the named node, right after `ASKING`
///   on the same connection.
/// - `TRYAGAIN`, `CLUSTERDOWN`, `LOADING`, a node that does not answer: wait
///   (exponential back-off), refresh the topology, retry, within the
///   ``RetryPolicy``. Only idempotent commands are retried once they may have
///   reached the server.
/// - Reads from replicas (``RedisClusterConfiguration/readFrom``): a command
///   marked ``RedisCommand/isReadOnly`` goes to a replica of its slot's
///   master that is not backing off, on connections that sent `READONLY`;
///   after any error or redirection from a replica, its further attempts go
///   to the master.
///
/// A task sending commands one after another can run on one of the client's
/// event loops (``withEventLoopAffinity(isolation:_:)``), where a round trip
/// wakes no thread of this process.
///
/// ```swift
/// let client = RedisClusterClient(configuration: .init(seeds: [NodeAddress(host: "127.0.0.1", port: 7000)]))
/// try await client.send(RedisCommand(["SET", "k", "v"], keyIndex: 1))
/// let value = try await client.send(RedisCommand(["GET", "k"], keyIndex: 1))
/// await client.shutdown()
/// ```
public final class RedisClusterClient: Sendable {
    /// The settings this client was created with.
    public let configuration: RedisClusterConfiguration
    let group: any EventLoopGroup
    private var logger: Logger { configuration.logger }

    private struct State {
        var map = SlotMap()
        var pools: [NodeAddress: NodeConnectionPool] = [:]
        /// Connections that sent `READONLY`, for reads from replicas.
        var readOnlyPools: [NodeAddress: NodeConnectionPool] = [:]
        var refresh: Task<Result<SlotMap, RedisClientError>, Never>?
        var lastRefresh: ContinuousClock.Instant?
        var statistics = RedisClusterStatistics()
        var isShutDown = false
    }

    private let state = Locked(State())
    /// The loops that hold a connection of every pool (see ``NodeConnectionPool``), as task executors.
    private let loopExecutors: [EventLoopTaskExecutor]
    private let nextLoop = Atomic<UInt>(0)

    /// Creates a client; it connects on first use (or ``refreshTopology()``).
    public init(configuration: RedisClusterConfiguration, group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton) {
        self.configuration = configuration
        self.group = group
        loopExecutors = group.makeIterator().prefix(max(configuration.connectionsPerNode, 1)).map(EventLoopTaskExecutor.init)
    }

    /// The default retry policy, from the configuration.
    public var defaultRetryPolicy: RetryPolicy {
        RetryPolicy(maximumAttempts: configuration.maximumAttempts, budget: configuration.retryBudget)
    }

    /// The slot map as last learned.
    public var slotMap: SlotMap { state.withLock { $0.map } }

    /// Counts since the client started.
    public var statistics: RedisClusterStatistics { state.withLock { $0.statistics } }

    // MARK: - Commands

    /// Sends `command` to the master of its slot (any master when it has no
    /// key), or to a replica of it when the command only reads and the
    /// configuration prefers replicas, and returns the reply, following redirections.
    /// - Throws: ``RedisClientError/server(_:)`` for an error reply, or why no reply came.
    @discardableResult
    public func send(_ command: RedisCommand, policy: RetryPolicy? = nil) async throws(RedisClientError) -> RESPValue {
        try await send(command, policy: policy, replicaAllowed: { _ in true })
    }

    /// Sends `command` as ``send(_:policy:)`` does, letting a replica answer
    /// only if `replicaAllowed` accepts it (the tiered cache's replica fence).
    func send(
        _ command: RedisCommand, policy: RetryPolicy?, replicaAllowed: (NodeAddress) -> Bool
    ) async throws(RedisClientError) -> RESPValue {
        let policy = policy ?? defaultRetryPolicy
        let started = ContinuousClock.now
        var attempt = 0
        var askTarget: NodeAddress?
        var mayUseReplica = command.isReadOnly && configuration.readFrom == .replicaPreferred
        while true {
            attempt += 1
            let outOfTries = attempt >= policy.maximumAttempts || ContinuousClock.now - started >= policy.budget
            var replica: NodeAddress?
            do throws(RedisClientError) {
                let connection: RedisConnection
                if let askTarget {
                    connection = try await pool(for: askTarget).connection()
                } else if mayUseReplica, let slot = command.slot, let chosen = try readOnlyPool(for: slot, where: replicaAllowed) {
                    replica = chosen.address
                    connection = try await chosen.connection()
                } else {
                    let master = try await self.node(for: command.slot)
                    connection = try await pool(for: master).connection()
                }
                let reply = askTarget == nil
                    ? try await connection.sendRaw(command.arguments)
                    : try await connection.sendRaw(batch: [["ASKING"], command.arguments])[1]
                askTarget = nil
                guard case let .error(message) = reply else {
                    if replica != nil { state.withLock { $0.statistics.replicaReads += 1 } }
                    return reply
                }
                if replica != nil {
                    // Whatever the replica says (MOVED, LOADING, MASTERDOWN), the master decides.
                    mayUseReplica = false
                    if case let .moved(slot, target)? = Redirection(error: message) {
                        state.withLock { $0.map.assign(slot, to: target) }
                        startRefresh()
                    }
                    guard !outOfTries else { throw RedisClientError.tooManyRedirections(command: command.name, last: message) }
                    continue
                }
                guard let redirection = Redirection(error: message) else { throw RedisClientError.server(message) }
                guard !outOfTries else {
                    throw RedisClientError.tooManyRedirections(command: command.name, last: message)
                }
                switch redirection {
                case let .moved(slot, target):
                    state.withLock {
                        $0.map.assign(slot, to: target)
                        $0.statistics.movedRedirections += 1
                    }
                    startRefresh()
                case let .ask(_, target):
                    askTarget = target
                    state.withLock { $0.statistics.askRedirections += 1 }
                case .retryLater, .loading:
                    state.withLock { $0.statistics.retries += 1 }
                    try? await Task.sleep(for: configuration.reconnectBackoff.delay(afterFailures: attempt))
                    if case .retryLater = redirection { startRefresh() }
                }
            } catch {
                askTarget = nil
                if replica != nil { mayUseReplica = false }
                let retryable = error.isConnectionFailure || error.commandSurelyNotSent
                guard retryable, !outOfTries, command.isIdempotent || error.commandSurelyNotSent else {
                    state.withLock { $0.statistics.failures += 1 }
                    throw error
                }
                state.withLock { $0.statistics.retries += 1 }
                startRefresh()
                // A replica failed: the master is asked next, without waiting.
                if replica != nil { continue }
                let remaining = policy.budget - (ContinuousClock.now - started)
                let delay = min(configuration.reconnectBackoff.delay(afterFailures: attempt), max(remaining, .zero))
                try? await Task.sleep(for: delay)
            }
        }
    }

    /// Sends many commands at once: grouped by node, each group written in
    /// one batch on one connection, every group before any reply is awaited,
    /// the writes and the wait on one of the client's event loops (see
    /// ``withEventLoopAffinity(isolation:_:)``). Replies come back
    /// in the order of `commands`; a command that was redirected or lost its
    /// node is retried alone through ``send(_:policy:)``.
    public func pipeline(_ commands: [RedisCommand], policy: RetryPolicy? = nil) async -> [Result<RESPValue, RedisClientError>] {
        var results = [Result<RESPValue, RedisClientError>?](repeating: nil, count: commands.count)
        // A list, not a dictionary: a cluster has a handful of masters, and
        // hashing each command's host name cost more than comparing it.
        var groups: [(node: NodeAddress, indices: [Int])] = []
        // The masters of the slots the map knows, read under one lock for the whole list.
        let slots = commands.map(\.slot)
        let known: [NodeAddress?] = state.withLock { state in
            slots.map { slot in slot.flatMap { state.isShutDown ? nil : state.map.master(for: $0) } }
        }
        for index in commands.indices {
            do throws(RedisClientError) {
                var master = known[index]
                if master == nil { master = try await node(for: slots[index]) }
                if let group = groups.firstIndex(where: { $0.node == master! }) {
                    groups[group].indices.append(index)
                } else {
                    groups.append((master!, [index]))
                }
            } catch {
                results[index] = .failure(error)
            }
        }
        // Every node's batch is written before any reply is awaited, so the
        // nodes work on them at once, and the task is resumed once, when the
        // last node's replies are in; no child task is needed for that.
        //
        // The batches are encoded, written and awaited on one of the client's
        // loops. A task from Swift's global executor crosses threads twice,
        // to the loop and back, as its write and its replies would anyway; but
        // on the loop its bytes join the other tasks' of the same pass in one
        // write, in a buffer no other thread touches.
        let nodes = groups
        let outcomes = await withEventLoopAffinity {
            let replies = PendingReplies(parts: nodes.count)
            for (part, (node, indices)) in nodes.enumerated() {
                do throws(RedisClientError) {
                    let connection = try await pool(for: node).connection()
                    connection.enqueue(batch: indices.map { commands[$0].arguments }, into: replies, part: part)
                } catch {
                    replies.complete(part: part, with: .failure(error))
                }
            }
            return await replies.values()
        }
        let batches = zip(nodes, outcomes).map { node, outcome in (indices: node.indices, replies: outcome) }
        var retry: [Int] = []
        for batch in batches {
            switch batch.replies {
            case let .success(replies):
                for (index, reply) in zip(batch.indices, replies) {
                    if case let .error(message) = reply {
                        if Redirection(error: message) != nil { retry.append(index) } else { results[index] = .failure(.server(message)) }
                    } else {
                        results[index] = .success(reply)
                    }
                }
            case let .failure(error):
                for index in batch.indices {
                    if commands[index].isIdempotent || error.commandSurelyNotSent { retry.append(index) } else { results[index] = .failure(error) }
                }
            }
        }
        for index in retry {
            do throws(RedisClientError) {
                results[index] = .success(try await send(commands[index], policy: policy))
            } catch {
                results[index] = .failure(error)
            }
        }
        return results.map { $0! }
    }

    // MARK: - Event loops

    /// Runs `body` in a task that prefers one of the client's event loops as
    /// its executor (`withTaskExecutorPreference`): its nonisolated code runs
    /// on the loop's thread, and the client hands it connections on that loop.
    /// A command it sends is then written from the loop itself, and the reply
    /// resumes it where it already is; a task on Swift's global executor
    /// instead wakes the loop to write and is woken on another thread for the reply.
    ///
    /// What `body` does between its awaits runs on the loop that the
    /// connections on it share: keep it to work that does not block. A call
    /// inside one stays on its loop; calls from outside are spread over the
    /// loops in turn. Code isolated to an actor keeps that isolation: a
    /// default actor runs it on the loop as well, an actor with an executor of
    /// its own on that executor.
    ///
    /// ```swift
    /// let values = try await client.withEventLoopAffinity {
    ///     var values: [RESPValue] = []
    ///     for key in keys { values.append(try await client.send(RedisCommand(["GET", RESPArgument(key)], keyIndex: 1))) }
    ///     return values
    /// }
    /// ```
    public func withEventLoopAffinity<T, Failure: Error>(
        isolation: isolated (any Actor)? = #isolation,
        _ body: () async throws(Failure) -> T
    ) async throws(Failure) -> T {
        let executor = loopExecutors.first { $0.loop.inEventLoop }
            ?? loopExecutors[Int(nextLoop.wrappingAdd(1, ordering: .relaxed).oldValue % UInt(loopExecutors.count))]
        return try await withTaskExecutorPreference(executor, isolation: isolation, operation: body)
    }

    // MARK: - Topology

    /// The master for `slot`, learning the topology first if it is unknown.
    private func node(for slot: HashSlot?) async throws(RedisClientError) -> NodeAddress {
        let known: NodeAddress? = try state.withLock { state throws(RedisClientError) in
            guard !state.isShutDown else { throw .shutDown }
            if let slot { return state.map.master(for: slot) }
            return state.map.masterNodes.randomElement()
        }
        if let known { return known }
        let map = try await refreshTopology()
        if let slot {
            guard let master = map.master(for: slot) else { throw .slotUnassigned(slot) }
            return master
        }
        guard let any = map.masterNodes.randomElement() else { throw .topologyUnavailable(reason: "the cluster has no master") }
        return any
    }

    /// The `READONLY` pool of a replica of `slot`'s master that `isAllowed`
    /// accepts and that is not backing off, picked at random; nil for none.
    private func readOnlyPool(for slot: HashSlot, where isAllowed: (NodeAddress) -> Bool) throws(RedisClientError) -> NodeConnectionPool? {
        try state.withLock { state throws(RedisClientError) in
            guard !state.isShutDown else { throw .shutDown }
            let candidates = state.map.replicas(for: slot).filter { replica in
                isAllowed(replica) && state.readOnlyPools[replica]?.isBackingOff != true
            }
            guard let replica = candidates.randomElement() else { return nil }
            if let pool = state.readOnlyPools[replica] { return pool }
            let pool = NodeConnectionPool(
                address: replica, size: configuration.connectionsPerNode, options: configuration.connection,
                backoff: configuration.reconnectBackoff, group: group, isReadOnly: true
            )
            state.readOnlyPools[replica] = pool
            return pool
        }
    }

    /// The connection pool of `node`, created on first use.
    func pool(for node: NodeAddress) throws(RedisClientError) -> NodeConnectionPool {
        try state.withLock { state throws(RedisClientError) in
            guard !state.isShutDown else { throw .shutDown }
            if let pool = state.pools[node] { return pool }
            let pool = NodeConnectionPool(
                address: node, size: configuration.connectionsPerNode, options: configuration.connection,
                backoff: configuration.reconnectBackoff, group: group
            )
            state.pools[node] = pool
            return pool
        }
    }

    /// Asks the cluster for its slot map now (one refresh at a time: a caller
    /// arriving during one waits for it) and returns it.
    @discardableResult
    public func refreshTopology() async throws(RedisClientError) -> SlotMap {
        let task: Task<Result<SlotMap, RedisClientError>, Never> = state.withLock { state in
            if let running = state.refresh { return running }
            let task = Task { await self.loadTopology() }
            state.refresh = task
            return task
        }
        let result = await task.value
        state.withLock { state in
            if state.refresh == task { state.refresh = nil }
        }
        return try result.get()
    }

    /// Starts a refresh in the background unless one ran in the last 100 ms.
    private func startRefresh() {
        let due = state.withLock { state in
            guard !state.isShutDown, state.refresh == nil else { return false }
            if let last = state.lastRefresh, ContinuousClock.now - last < .milliseconds(100) { return false }
            state.lastRefresh = ContinuousClock.now
            return true
        }
        if due { Task { _ = try? await self.refreshTopology() } }
    }

    /// Asks the known nodes, then the seeds, for `CLUSTER SLOTS`; keeps the
    /// first answer that covers every slot, else the one that covers most.
    /// When no node answers and one refused the client (credentials,
    /// certificates), that refusal is the error, not a topology one.
    private func loadTopology() async -> Result<SlotMap, RedisClientError> {
        let current = state.withLock { $0.map }
        var candidates: [NodeAddress] = []
        for node in current.masterNodes + current.shards.flatMap(\.replicas) + configuration.seeds where !candidates.contains(node) {
            candidates.append(node)
        }
        var best: SlotMap?
        var lastError = "no node to ask"
        var refusal: RedisClientError?
        for node in candidates {
            do throws(RedisClientError) {
                let connection = try await pool(for: node).connection()
                let reply = try await connection.send(["CLUSTER", "SLOTS"])
                let map = try SlotMap(clusterSlots: reply, fallbackHost: node.host)
                if map.coversAllSlots {
                    best = map
                    break
                }
                if best == nil || map.shards.count > best!.shards.count { best = map }
            } catch {
                lastError = "\(node): \(error)"
                if error.isRefusal { refusal = error }
            }
        }
        guard let best else {
            logger.debug("Redis cluster topology unavailable: \(lastError)")
            return .failure(refusal ?? .topologyUnavailable(reason: lastError))
        }
        let changed = state.withLock { state in
            defer {
                state.map = best
                state.lastRefresh = ContinuousClock.now
                state.statistics.topologyRefreshes += 1
            }
            return state.map.masterNodes != best.masterNodes
        }
        if changed { logger.info("Redis cluster masters: \(best.masterNodes.map(\.description).joined(separator: ", "))") }
        return .success(best)
    }

    /// Closes every connection; later commands fail with ``RedisClientError/shutDown``.
    public func shutdown() async {
        let (pools, refresh) = state.withLock { state in
            state.isShutDown = true
            defer {
                state.pools = [:]
                state.readOnlyPools = [:]
            }
            return (Array(state.pools.values) + Array(state.readOnlyPools.values), state.refresh)
        }
        _ = await refresh?.value
        pools.forEach { $0.close() }
    }
}
