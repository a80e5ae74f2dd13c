import KacheStorage
import Logging

/// Keeps one RESP3 connection to every master with
/// `CLIENT TRACKING ON BCAST PREFIX <prefix>`, and turns the `invalidate`
/// push messages they receive into calls of `onKeys`.
///
/// Tracking is per node, so every master is tracked; a check every
/// `interval` opens connections to masters that appeared (a failover, a new
/// shard) and drops those to nodes that are masters no more.
///
/// **Gaps are counted in slots, not in nodes.** A lost link leaves the slots
/// its node served (as last seen while the link was up, and as the map has
/// them now) *unresolved*: changes to them may have been missed. So do the
/// slots of a node whose tracking starts after start-up (a reconnect, a
/// replica promoted to master, a master unreachable at start). A slot is
/// resolved once its current master is tracked again: then `onGap` gets the
/// resolved slots, and the owner drops its local copies of keys in them
/// (Redis's own advice for a client that lost its invalidation link, narrowed
/// to what that link carried). Other slots keep their copies. Nothing is
/// dropped when the link drops: while a master is down nothing changes in its
/// slots, so the local tier keeps serving them through a failover.
final class InvalidationListener: Sendable {
    private let client: RedisClusterClient
    private let prefix: String
    private let interval: Duration
    private let logger: Logger
    private struct Handlers: Sendable {
        var onKeys: @Sendable ([String]?) -> Void = { _ in }
        var onGap: @Sendable (SlotSet, String) -> Void = { _, _ in }
    }

    private let handlers = Locked(Handlers())

    private struct State {
        var connections: [NodeAddress: RedisConnection] = [:]
        var loop: Task<Void, Never>?
        var isStopped = false
        var ticks = 0
        /// The slots each tracked node served, as last seen while its link was up.
        var served: [NodeAddress: SlotSet] = [:]
        /// The map `served` was read from: a tick with the same map recomputes
        /// nothing (reading a node's slots scans all 16,384).
        var servedFrom: SlotMap?
        /// Slots whose changes may have been missed, until their master is tracked again.
        var unresolved = SlotSet()
    }

    private let state = Locked(State())

    init(client: RedisClusterClient, prefix: String, interval: Duration, logger: Logger) {
        self.client = client
        self.prefix = prefix
        self.interval = interval
        self.logger = logger
    }

    /// Sets what invalidations (`onKeys`, nil for "everything") and resolved
    /// gaps (`onGap`, with the slots concerned) call; before ``start()``.
    func bind(onKeys: @escaping @Sendable ([String]?) -> Void, onGap: @escaping @Sendable (SlotSet, String) -> Void) {
        handlers.withLock { $0 = Handlers(onKeys: onKeys, onGap: onGap) }
    }

    /// Slots whose changes may have been missed and whose master is not tracked yet.
    var unresolvedSlots: SlotSet { state.withLock { $0.unresolved } }

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
        let mapBefore = client.slotMap
        let (lost, dueForRefresh) = state.withLock { state in
            state.ticks += 1
            let lost = state.connections.filter { !$0.value.isActive }.map(\.key)
            for node in lost {
                state.connections[node] = nil
                var slots = state.served.removeValue(forKey: node) ?? SlotSet()
                slots.formUnion(mapBefore.slots(servedBy: node))
                state.unresolved.formUnion(slots)
            }
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
        // A node that is master no more had its link up until now: nothing of
        // its slots was missed, and their new master is tracked on its own.
        let stale = state.withLock { state in
            let stale = state.connections.filter { !masters.contains($0.key) }
            for node in stale.keys {
                state.connections[node] = nil
                state.served[node] = nil
            }
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
                    // moment. Tracking it drops the local copies of its slots, after which
                    // their reads go to Redis: wait until the cluster serves them.
                    let info = try await connection.send(["CLUSTER", "INFO"]).string ?? ""
                    guard info.contains("cluster_state:ok") else {
                        connection.close()
                        continue
                    }
                }
                try await connection.send(["CLIENT", "TRACKING", "ON", "BCAST", "PREFIX", RESPArgument(prefix)])
                let map = client.slotMap
                let keep = state.withLock { state in
                    guard !state.isStopped else { return false }
                    state.connections[node] = connection
                    // Tracked from now on; whatever it served before may have changed unseen.
                    if !initial { state.unresolved.formUnion(map.slots(servedBy: node)) }
                    return true
                }
                guard keep else {
                    connection.close()
                    return
                }
            } catch {
                logger.debug("Kache can't track invalidations on Redis node \(node) yet: \(error)")
            }
        }
        resolveGaps()
    }

    /// Records the slots each tracked node serves now, and hands the
    /// unresolved slots whose master is tracked again to `onGap`. Runs after
    /// `CLIENT TRACKING ON` succeeded on those masters, so a change after the
    /// owner's drop is reported, and one before it is dropped.
    private func resolveGaps() {
        let map = client.slotMap
        let resolved = state.withLock { state in
            let mapChanged = state.servedFrom != map
            state.servedFrom = map
            for (node, connection) in state.connections where connection.isActive && (mapChanged || state.served[node] == nil) {
                state.served[node] = map.slots(servedBy: node)
            }
            guard !state.unresolved.isEmpty else { return SlotSet() }
            let connections = state.connections
            let resolved = state.unresolved.filter { slot in
                map.master(for: slot).flatMap { connections[$0] }?.isActive == true
            }
            state.unresolved.subtract(resolved)
            return resolved
        }
        guard !resolved.isEmpty else { return }
        let nodes = map.masterNodes.filter { node in !map.slots(servedBy: node).filter(resolved.contains).isEmpty }
        let reason = "tracking resumed on \(nodes.map(\.description).joined(separator: ", ")) for \(resolved.count) slots"
        handlers.withLock { $0.onGap }(resolved, reason)
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
