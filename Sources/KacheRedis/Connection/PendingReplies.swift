import Synchronization

/// The replies of a batch written now and awaited later, so that a caller can
/// write batches on several connections before it awaits any
/// (``RedisClusterClient/pipeline(_:policy:)``).
///
/// Completed once, by the connection's handler on the event loop; awaited once.
/// Whichever of the two comes second hands the result over, so the awaiting
/// task is resumed directly by the handler when it was already waiting.
final class PendingReplies: Sendable {
    private typealias Outcome = Result<[RESPValue], RedisClientError>

    private enum State {
        case waiting
        case awaited(CheckedContinuation<Outcome, Never>)
        case completed(Outcome)
        case handedOver
    }

    private let state = Mutex(State.waiting)

    /// A batch that is complete before it was sent (no commands, or a refusal).
    init(completed outcome: Result<[RESPValue], RedisClientError>? = nil) {
        if let outcome { state.withLock { $0 = .completed(outcome) } }
    }

    /// Hands `outcome` to the task awaiting it, or keeps it for ``value()``.
    func complete(_ outcome: Result<[RESPValue], RedisClientError>) {
        let waiter: CheckedContinuation<Outcome, Never>? = state.withLock { state in
            switch state {
            case .waiting:
                state = .completed(outcome)
                return nil
            case let .awaited(continuation):
                state = .handedOver
                return continuation
            case .completed, .handedOver:
                return nil
            }
        }
        waiter?.resume(returning: outcome)
    }

    /// The replies, in the order of the commands.
    /// - Throws: the ``RedisClientError`` that ended the connection or the request.
    func value() async throws(RedisClientError) -> [RESPValue] {
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Outcome, Never>) in
            let ready: Outcome? = state.withLock { state in
                guard case let .completed(outcome) = state else {
                    state = .awaited(continuation)
                    return nil
                }
                state = .handedOver
                return outcome
            }
            if let ready { continuation.resume(returning: ready) }
        }
        return try outcome.get()
    }
}
