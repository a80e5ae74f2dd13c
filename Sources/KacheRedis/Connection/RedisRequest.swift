import CKacheSystem
import NIOCore

/// Commands written together on one connection, waiting for their replies in
/// order. A request of n commands is n replies long; push messages that arrive
/// between them are not replies and are routed elsewhere.
///
/// The request leaves the handler's queue exactly once, with its replies or
/// with an error, so its receiver is completed exactly once.
///
/// A class, so that the queues move a reference: as a struct holding a
/// two-case enum of references, each copy in the outbox's array and the
/// handler's queue went through the runtime's generic enum copy, 5 % of an
/// event loop's time in pipelined SETs.
final class RedisRequest: Sendable {
    /// How many replies complete the request.
    let replyCount: Int
    /// Who gets the replies.
    let receiver: ReplyReceiver
    /// When the request times out.
    let deadline: NIODeadline

    init(replyCount: Int, receiver: ReplyReceiver, deadline: NIODeadline) {
        self.replyCount = replyCount
        self.receiver = receiver
        self.deadline = deadline
    }

    /// Fails the request: its task, or its part of a batch.
    func fail(_ error: RedisClientError) {
        announceHandOff()
        receiver.fail(error)
    }

    /// Tells ThreadSanitizer that what the event loop wrote so far is the
    /// awaiting task's to read (``awaitHandOff()``, on the task's side). A
    /// reply that arrives before its task has finished suspending reaches the
    /// task through the concurrency runtime's own atomics, which TSan does not
    /// see on Linux, so without this it reported the reply's `ByteBuffer` as a race.
    func announceHandOff() {
        kache_tsan_release(Unmanaged.passUnretained(self).toOpaque())
    }

    /// The task's side of ``announceHandOff()``: after its await returns.
    func awaitHandOff() {
        kache_tsan_acquire(Unmanaged.passUnretained(self).toOpaque())
    }
}

/// Who a request's replies go to. The handler completes it on the event loop,
/// straight into the awaiting task: no promise, no future, no callback between.
enum ReplyReceiver: Sendable {
    /// One command's task, waiting for its reply: no array is built for it.
    case one(CheckedContinuation<Result<RESPValue, RedisClientError>, Never>)
    /// A batch of commands, one part of replies awaited now or later (``PendingReplies``).
    case many(PendingReplies, part: Int)

    func fail(_ error: RedisClientError) {
        switch self {
        case let .one(continuation): continuation.resume(returning: .failure(error))
        case let .many(replies, part): replies.complete(part: part, with: .failure(error))
        }
    }
}
