import CKacheSystem
import KacheStorage

/// The replies of batches written now and awaited later, together: a
/// pipeline written to several nodes at once
/// (``RedisClusterClient/pipeline(_:policy:)``) is one `PendingReplies` of
/// one part per node.
///
/// Each part is completed once, by its connection's handler on the event
/// loop; the whole is awaited once. The awaiting task is resumed once, by
/// whichever handler completes the last part, so a pipeline over three nodes
/// costs its task one wake-up, not one per node.
final class PendingReplies: Sendable {
    typealias Outcome = Result<[RESPValue], RedisClientError>

    private struct State {
        var outcomes: [Outcome?]
        var remaining: Int
        var waiter: CheckedContinuation<[Outcome], Never>?
    }

    private let state: Locked<State>

    /// Replies of `parts` batches, none complete yet.
    init(parts: Int) {
        state = Locked(State(outcomes: Array(repeating: nil, count: parts), remaining: parts))
    }

    /// Sets part `part`'s outcome; the last part to complete resumes the task awaiting ``values()``.
    /// A part completed twice keeps its first outcome.
    func complete(part: Int, with outcome: Outcome) {
        let resume: (CheckedContinuation<[Outcome], Never>, [Outcome])? = state.withLock { state in
            guard state.outcomes[part] == nil else { return nil }
            state.outcomes[part] = outcome
            state.remaining -= 1
            guard state.remaining == 0, let waiter = state.waiter else { return nil }
            state.waiter = nil
            return (waiter, state.outcomes.map { $0! })
        }
        if let (waiter, outcomes) = resume {
            // As RedisRequest's hand-off: the awaiting task may not have finished
            // suspending, and TSan does not see the runtime's atomics between them.
            kache_tsan_release(Unmanaged.passUnretained(self).toOpaque())
            waiter.resume(returning: outcomes)
        }
    }

    /// Whether a task awaits ``values()`` now.
    var isAwaited: Bool { state.withLock { $0.waiter != nil } }

    /// Every part's outcome, in the order of the parts, once all are complete.
    func values() async -> [Outcome] {
        defer { kache_tsan_acquire(Unmanaged.passUnretained(self).toOpaque()) }
        return await withCheckedContinuation { (continuation: CheckedContinuation<[Outcome], Never>) in
            let ready: [Outcome]? = state.withLock { state in
                guard state.remaining == 0 else {
                    state.waiter = continuation
                    return nil
                }
                return state.outcomes.map { $0! }
            }
            if let ready { continuation.resume(returning: ready) }
        }
    }
}
