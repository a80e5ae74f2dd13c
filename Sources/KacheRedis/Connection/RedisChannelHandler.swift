import NIOCore

/// The pipeline stage of one connection: writes what the connection's
/// ``RequestOutbox`` gathered, pairs replies with requests in order (so many
/// requests are in flight at once), hands push messages to `onPush`, and
/// enforces each request's deadline.
///
/// The outbox is drained by one event-loop task per burst, so concurrent
/// callers' commands leave in one write and one flush, as a pipeline would.
/// Replies complete their requests' receivers directly from `channelRead`.
/// A framing error, a timeout or the channel closing fails every request in
/// flight and closes the channel: after any of them replies can't be trusted
/// to line up with requests.
final class RedisChannelHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundOut = ByteBuffer

    private let address: NodeAddress
    private let parser: RESPParser
    private let onPush: @Sendable (RESPValue) -> Void
    private var context: ChannelHandlerContext?
    private var pending = CircularBuffer<RedisRequest>(initialCapacity: 16)
    /// Replies gathered so far for the batch at the head of `pending`.
    private var replies: [RESPValue] = []
    private var cumulation: ByteBuffer?
    /// Armed while requests are pending, for the deadline of the head as it
    /// was when armed; when it fires it checks the head now and re-arms. One
    /// timer per deadline period, not one per reply.
    private var timer: Scheduled<Void>?
    private var failure: RedisClientError?
    private let timeout: Duration

    init(address: NodeAddress, timeout: Duration, limits: RESPLimits, onPush: @escaping @Sendable (RESPValue) -> Void) {
        self.address = address
        self.timeout = timeout
        parser = RESPParser(limits: limits)
        self.onPush = onPush
    }

    func handlerAdded(context: ChannelHandlerContext) {
        self.context = context
    }

    func handlerRemoved(context: ChannelHandlerContext) {
        fail(.connectionClosed(address), context: nil)
        self.context = nil
    }

    /// Writes and flushes `bytes`, the commands of `requests` in order, and
    /// queues the requests for their replies. On the event loop.
    func write(_ bytes: ByteBuffer, for requests: [RedisRequest]) {
        guard failure == nil, let context else {
            let error = failure ?? .connectionClosed(address)
            for request in requests { request.fail(error) }
            return
        }
        guard !requests.isEmpty else { return }
        pending.append(contentsOf: requests)
        armTimer(context: context)
        context.writeAndFlush(wrapOutboundOut(bytes), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        if var leftover = cumulation, leftover.readableBytes > 0 {
            cumulation = nil
            if leftover.readerIndex > 0 {
                // Values were read from this buffer, and the bulk strings among
                // them share its storage: appending would copy all of it, read
                // bytes included. Copy the unread start of the next value alone.
                var joined = context.channel.allocator.buffer(capacity: leftover.readableBytes + incoming.readableBytes)
                joined.writeBuffer(&leftover)
                leftover = joined
            }
            leftover.writeBuffer(&incoming)
            cumulation = leftover
        } else {
            cumulation = incoming
        }
        do {
            while let value = try parser.next(from: &cumulation!) {
                deliver(value, context: context)
            }
        } catch {
            fail(.protocolError(error), context: context)
            return
        }
        if cumulation?.readableBytes == 0 { cumulation = nil }
    }

    private func deliver(_ value: RESPValue, context: ChannelHandlerContext) {
        if case .push = value {
            onPush(value)
            return
        }
        guard let head = pending.first else {
            // A reply nobody asked for: the stream is out of step.
            fail(.unexpectedReply(command: "(none pending)", reply: value), context: context)
            return
        }
        switch head.receiver {
        case let .one(continuation):
            pending.removeFirst()
            head.announceHandOff()
            continuation.resume(returning: .success(value))
        case let .many(batch, part):
            // The batch's size is known: one allocation for its replies, not one per doubling.
            if replies.isEmpty { replies.reserveCapacity(head.replyCount) }
            replies.append(value)
            guard replies.count == head.replyCount else { return }
            pending.removeFirst()
            let done = replies
            replies = []
            batch.complete(part: part, with: .success(done))
        }
    }

    /// Times the request now at the head of the queue, unless a timer runs already.
    private func armTimer(context: ChannelHandlerContext) {
        guard timer == nil, let head = pending.first else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: head.deadline) { [self] in
            self.timer = nil
            guard let head = self.pending.first else { return }
            if head.deadline <= .now() {
                self.fail(.timeout(self.address, self.timeout), context: context)
            } else {
                self.armTimer(context: context)
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        fail(.connectionClosed(address), context: nil)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: Error) {
        // A RedisClientError here is a TLS failure that TLSFailureNaming named.
        fail((error as? RedisClientError) ?? .connectionClosed(address), context: context)
    }

    /// Fails every request in flight (and every later one) and closes the channel.
    private func fail(_ error: RedisClientError, context: ChannelHandlerContext?) {
        if failure == nil { failure = error }
        timer?.cancel()
        timer = nil
        let failed = pending
        pending.removeAll()
        replies = []
        for request in failed { request.fail(error) }
        context?.close(promise: nil)
    }
}
