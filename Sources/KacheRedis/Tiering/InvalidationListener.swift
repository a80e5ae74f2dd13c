import Logging
import Synchronization

/// Keeps one RESP3 connection to every master with
/// `CLIENT TRACKING ON BCAST PREFIX <prefix>`, and turns the `invalidate`
/// push messages they receive into calls of `onKeys`.
///
/// Tracking is per node, so every master is tracked; a check every
/// `interval` opens connections to masters that appeared (a failover, a new
/// shard) and drops those to nodes that are masters no more. Whenever
/// tracking may have missed a change (a tracking connection opened after
/// start-up: a reconnect, or a replica promoted to master), `onGap` is called
/// so the owner can empty its local tier: Redis's own advice for a client
/// that lost its invalidation link. It is called when tracking starts again,
/// not when the link drops: while a master is down nothing changes in its
/// slots, so the local tier keeps serving through a failover, and is emptied
/// once the new master is tracked.
final class InvalidationListener: Sendable {
    private let client: RedisClusterClient
    private let prefix: String
    private let interval: Duration
    private let logger: Logger
    private struct Handlers: Sendable {
        var onKeys: @Sendable ([String]?) -> Void = { _ in }
        var onGap: @Sendable (String) -> Void = { _ in }
    }

    private let handlers = Mutex(Handlers())

    private struct State {
        var connections: [NodeAddress: RedisConnection] = [:]
        var loop: Task<Void, Never>?
        var isStopped = false
        var ticks = 0
    }

    private let state = Mutex(State())

    init(client: RedisClusterClient, prefix: String, interval: Duration, logger: Logger) {
        self.client = client
        self.prefix = prefix
        self.interval = interval
        self.logger = logger
    }

    /// Sets what invalidations (`onKeys`, nil for "everything") and gaps call; before ``start()``.
    func bind(onKeys: @escaping @Sendable ([String]?) -> Void, onGap: @escaping @Sendable (String) -> Void) {
        handlers.withLock { $0 = Handlers(onKeys: onKeys, onGap: onGap) }
    }

    private func onGap(_ reason: String) {
        handlers.withLock { $0.onGap }(reason)
    }

    /// Tracks every master it can reach now, then keeps checking in the background.
    func start() async {
        await reconcile(initial: true)
        let task = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                try? await Task.sleep(for: self.interval)
                guard !self.state.withLock({ $0.isStopped }) else { return }
                await self.reconcile(initial: false)
            }
        }
        state.withLock { $0.loop = task }
    }

    /// Closes every tracking connection and stops checking.
    func stop() async {
        let (loop, connections) = state.withLock { state in
            state.isStopped = true
            defer { state.connections = [:] }
            return (state.loop, Array(state.connections.values))
        }
        loop?.cancel()
        _ = await loop?.value
        connections.forEach { $0.close() }
    }

    /// Whether every current master is tracked.
    var isTrackingEveryMaster: Bool {
        let masters = client.slotMap.masterNodes
        return state.withLock { state in
            !masters.isEmpty && masters.allSatisfy { state.connections[$0]?.isActive == true }
        }
    }

    private func reconcile(initial: Bool) async {
        let (lost, dueForRefresh) = state.withLock { state in
            state.ticks += 1
            let lost = state.connections.filter { !$0.value.isActive }.map(\.key)
            for node in lost { state.connections[node] = nil }
            return (lost, state.ticks % 10 == 0)
        }
        if !lost.isEmpty {
            logger.warning("Kache lost its invalidation link to \(lost.map(\.description).joined(separator: ", ")); reconnecting")
        }
        var masters = client.slotMap.masterNodes
        let missing = masters.contains { node in state.withLock { $0.connections[node] == nil } }
        if masters.isEmpty || missing || !lost.isEmpty || dueForRefresh {
            if let map = try? await client.refreshTopology() { masters = map.masterNodes }
        }
        let stale = state.withLock { state in
            let stale = state.connections.filter { !masters.contains($0.key) }
            for node in stale.keys { state.connections[node] = nil }
            return Array(stale.values)
        }
        stale.forEach { $0.close() }
        for node in masters where state.withLock({ $0.connections[node] == nil && !$0.isStopped }) {
            do throws(RedisClientError) {
                let connection = try await RedisConnection.connect(
                    to: node, options: client.configuration.connection, group: client.group,
                    onPush: { [weak self] message in
                        guard let self else { return }
                        Self.deliver(message, prefix: self.prefix, to: self.handlers.withLock { $0.onKeys })
                    }
                )
                guard connection.protocolVersion == 3 else {
                    connection.close()
                    logger.warning("Redis node \(node) does not speak RESP3; invalidations are not tracked there")
                    continue
                }
                if !initial {
                    // A node that just became master (a failover) answers CLUSTERDOWN for a
                    // moment. Tracking it starts a gap flush of the local tier, after which
                    // reads go to Redis: wait until the cluster serves them.
                    let info = try await connection.send(["CLUSTER", "INFO"]).string ?? ""
                    guard info.contains("cluster_state:ok") else {
                        connection.close()
                        continue
                    }
                }
                try await connection.send(["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", RESPArgument(prefix)])
                let keep = state.withLock { state in
                    guard !state.isStopped else { return false }
                    state.connections[node] = connection
                    return true
                }
                guard keep else {
                    connection.close()
                    return
                }
                if !initial { onGap("started tracking \(node)") }
            } catch {
                logger.debug("Kache can't track invalidations on Redis node \(node) yet: \(error)")
            }
        }
    }

    /// Reads an `invalidate` push: `["invalidate", [key, …]]`, or a null list when the node flushed.
    static func deliver(_ message: RESPValue, prefix: String, to onKeys: @Sendable ([String]?) -> Void) {
        guard case let .push(parts) = message, parts.count >= 2, parts[0].string == "invalidate" else { return }
        guard let keys = parts[1].elements else {
            onKeys(nil)
            return
        }
        onKeys(keys.compactMap { value in
            guard let key = value.string, key.hasPrefix(prefix) else { return nil }
            return String(key.dropFirst(prefix.count))
        })
    }
}
