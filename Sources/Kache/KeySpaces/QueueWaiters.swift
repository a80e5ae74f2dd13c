import KacheStorage
/// The tasks waiting for a Queue's next push (`queue.items`), and the count
/// of pushes they compare against so that a push between "the Queue was
/// empty" and "wait" is never missed.
///
/// A waiter reads `pushes(space:)` before it pops; if the pop finds nothing it
/// waits for that count to move. Pushes, `load()` and `close()` move it.
final class QueueWaiters: Sendable {
    private struct Waiter: Sendable {
        var space: Int
        var continuation: CheckedContinuation<Bool, any Error>
    }

    private struct State: Sendable {
        var pushes: [Int: UInt64] = [:]
        var waiters: [UInt64: Waiter] = [:]
        /// Waiters cancelled before they were registered.
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
        var isClosed = false
    }

    private let state = Locked(State())

    /// Pushes to the Queue at `space` so far.
    func pushes(space: Int) -> UInt64 {
        state.withLock { $0.pushes[space, default: 0] }
    }

    /// How many tasks wait for the Queue at `space` now.
    func waiting(space: Int) -> Int {
        state.withLock { state in state.waiters.values.count { $0.space == space } }
    }

    /// Wakes the Queue's waiters after a push.
    func notePush(space: Int) {
        let woken = state.withLock { state -> [Waiter] in
            state.pushes[space, default: 0] &+= 1
            let woken = state.waiters.filter { $0.value.space == space }
            for id in woken.keys { state.waiters[id] = nil }
            return Array(woken.values)
        }
        for waiter in woken { waiter.continuation.resume(returning: true) }
    }

    /// Wakes every waiter: the index was reloaded, any Queue may hold items.
    func noteReload() {
        let woken = state.withLock { state -> [Waiter] in
            for space in state.pushes.keys { state.pushes[space]! &+= 1 }
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in woken { waiter.continuation.resume(returning: true) }
    }

    /// Ends every wait, now and later: the cache closed.
    func close() {
        let woken = state.withLock { state -> [Waiter] in
            state.isClosed = true
            defer { state.waiters = [:] }
            return Array(state.waiters.values)
        }
        for waiter in woken { waiter.continuation.resume(returning: false) }
    }

    /// Waits until the Queue at `space` has had more than `seen` pushes.
    /// - Returns: false when the cache is closed.
    /// - Throws: `CancellationError` when the task is cancelled.
    func wait(space: Int, after seen: UInt64) async throws -> Bool {
        let id = state.withLock { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        // A cancellation that came after the wait ended leaves no mark behind.
        defer { state.withLock { _ = $0.cancelled.remove(id) } }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                enum Now { case wait, pushed, closed, cancelled }
                let now = state.withLock { state -> Now in
                    if state.cancelled.remove(id) != nil { return .cancelled }
                    if state.isClosed { return .closed }
                    if state.pushes[space, default: 0] != seen { return .pushed }
                    state.waiters[id] = Waiter(space: space, continuation: continuation)
                    return .wait
                }
                switch now {
                case .wait: break
                case .pushed: continuation.resume(returning: true)
                case .closed: continuation.resume(returning: false)
                case .cancelled: continuation.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            let waiter = state.withLock { state -> Waiter? in
                guard let waiter = state.waiters.removeValue(forKey: id) else {
                    state.cancelled.insert(id)
                    return nil
                }
                return waiter
            }
            waiter?.continuation.resume(throwing: CancellationError())
        }
    }
}
