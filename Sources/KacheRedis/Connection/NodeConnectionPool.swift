import KacheStorage
import NIOCore

/// A fixed number of connections to one node, opened on first use, used in
/// turn (each carries many pipelined commands), and reopened after they fail.
///
/// Connection i is opened on the group's event loop i (modulo their count),
/// so that the loops share the pool's connections. A caller running on one of
/// those loops (``RedisClusterClient/withEventLoopAffinity(isolation:_:)``)
/// is given a connection of its own loop: its command and its reply then
/// cross no thread.
///
/// After a failed connect the node is in back-off: until the delay passes,
/// callers fail at once with ``RedisClientError/nodeBackingOff(_:)`` instead
/// of each waiting for a connect timeout of their own. That keeps a `get`
/// against a dead node as fast as a local miss. When the node refused the
/// client (credentials, certificates: ``RedisClientError/isRefusal``), the
/// back-off repeats that error instead, so every caller learns why.
///
/// A pool for reads from a replica sends `READONLY` on each connection it
/// opens, so the replica answers reads of its master's slots instead of `MOVED`.
final class NodeConnectionPool: Sendable {
    let address: NodeAddress
    let isReadOnly: Bool
    private let options: RedisConnection.Options
    private let backoff: Backoff
    /// The group's loops, in the order connections are spread over them.
    private let loops: [any EventLoop]
    private let onPush: @Sendable (RESPValue) -> Void

    private enum Slot {
        case empty
        case connecting(EventLoopFuture<RedisConnection>)
        case ready(RedisConnection)
    }

    private struct State {
        var slots: [Slot]
        var next = 0
        var failures = 0
        var retryAt: ContinuousClock.Instant?
        var refusal: RedisClientError?
        var isClosed = false
    }

    private let state: Locked<State>

    init(address: NodeAddress, size: Int, options: RedisConnection.Options, backoff: Backoff,
         group: any EventLoopGroup, isReadOnly: Bool = false, onPush: @escaping @Sendable (RESPValue) -> Void = { _ in }) {
        self.address = address
        self.isReadOnly = isReadOnly
        self.options = options
        self.backoff = backoff
        loops = Array(group.makeIterator())
        self.onPush = onPush
        state = Locked(State(slots: Array(repeating: .empty, count: max(size, 1))))
    }

    /// Whether a connect failed lately and the node is waiting out its back-off.
    var isBackingOff: Bool {
        state.withLock { state in state.retryAt.map { ContinuousClock.now < $0 } ?? false }
    }

    /// A connection, opening one if the next slot has none.
    func connection() async throws(RedisClientError) -> RedisConnection {
        enum Step { case use(RedisConnection), wait(EventLoopFuture<RedisConnection>), open(Int, EventLoopPromise<RedisConnection>) }
        let step: Step = try state.withLock { state throws(RedisClientError) in
            guard !state.isClosed else { throw .shutDown }
            let index = nextSlot(&state)
            switch state.slots[index] {
            case let .ready(connection) where connection.isActive:
                return .use(connection)
            case let .connecting(future):
                return .wait(future)
            case .ready, .empty:
                if let retryAt = state.retryAt, ContinuousClock.now < retryAt { throw state.refusal ?? .nodeBackingOff(address) }
                let promise = loop(of: index).makePromise(of: RedisConnection.self)
                state.slots[index] = .connecting(promise.futureResult)
                return .open(index, promise)
            }
        }
        switch step {
        case let .use(connection):
            return connection
        case let .wait(future):
            do { return try await future.get() } catch { throw (error as? RedisClientError) ?? .connectionClosed(address) }
        case let .open(index, promise):
            do throws(RedisClientError) {
                let connection = try await RedisConnection.connect(to: address, options: options, group: loop(of: index), onPush: onPush)
                if isReadOnly {
                    do throws(RedisClientError) {
                        try await connection.send(["READONLY"])
                    } catch {
                        connection.close()
                        throw error
                    }
                }
                let closed = state.withLock { state in
                    state.failures = 0
                    state.retryAt = nil
                    state.refusal = nil
                    state.slots[index] = .ready(connection)
                    return state.isClosed
                }
                if closed { connection.close() }
                promise.succeed(connection)
                return connection
            } catch {
                state.withLock { state in
                    state.failures += 1
                    state.retryAt = ContinuousClock.now + backoff.delay(afterFailures: state.failures)
                    state.refusal = error.isRefusal ? error : nil
                    state.slots[index] = .empty
                }
                promise.fail(error)
                throw error
            }
        }
    }

    /// The loop that slot `index`'s connection runs on.
    private func loop(of index: Int) -> any EventLoop {
        loops[index % loops.count]
    }

    /// The slot to use next: in turn among those on the caller's event loop
    /// when the caller runs on one that has any, else in turn among all.
    private func nextSlot(_ state: inout State) -> Int {
        let count = state.slots.count
        defer { state.next = (state.next + 1) % count }
        if loops.count > 1, let first = loops.firstIndex(where: { $0.inEventLoop }), first < count {
            // Slots first, first + loops.count, …: those on this loop.
            let onLoop = (count - first + loops.count - 1) / loops.count
            return first + loops.count * (state.next % onLoop)
        }
        return state.next
    }

    /// Closes every connection; later calls fail with ``RedisClientError/shutDown``.
    func close() {
        let slots = state.withLock { state in
            state.isClosed = true
            defer { state.slots = state.slots.map { _ in .empty } }
            return state.slots
        }
        for slot in slots {
            switch slot {
            case let .ready(connection): connection.close()
            case let .connecting(future): future.whenSuccess { $0.close() }
            case .empty: break
            }
        }
    }
}
