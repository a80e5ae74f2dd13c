import NIOCore

/// Commands written together on one connection, and the promise of their
/// replies, in order. A batch of n commands is n replies long; push messages
/// that arrive between them are not replies and are routed elsewhere.
struct RedisRequest: Sendable {
    /// The encoded commands.
    var bytes: ByteBuffer
    /// How many replies complete the request.
    var replyCount: Int
    /// Fulfilled with the replies, or failed with a ``RedisClientError``.
    var promise: EventLoopPromise<[RESPValue]>
    /// When the request times out.
    var deadline: NIODeadline
}
