import NIOCore

/// The pipeline stage of one connection: writes requests, pairs replies with
/// them in order (so many requests are in flight at once), hands push
/// messages to `onPush`, and enforces each request's deadline.
///
/// Writes submitted within one event-loop tick share one flush, so
/// concurrent callers' commands leave in one syscall, as a pipeline would.
/// A framing error, a timeout or the channel closing fails every request in
/// flight and closes the channel: after any of them replies can't be trusted
/// to line up with requests.
final class RedisChannelHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias OutboundIn = RedisRequest
    typealias OutboundOut = ByteBuffer

    private let address: NodeAddress
    private let parser: RESPParser
    private let onPush: @Sendable (RESPValue) -> Void
    private var pending = CircularBuffer<RedisRequest>(initialCapacity: 16)
    /// Replies gathered so far for the request at the head of `pending`.
    private var replies: [RESPValue] = []
    private var cumulation: ByteBuffer?
    private var flushScheduled = false
    private var timer: Scheduled<Void>?
    private var failure: RedisClientError?
    private let timeout: Duration

    init(address: NodeAddress, timeout: Duration, limits: RESPLimits, onPush: @escaping @Sendable (RESPValue) -> Void) {
        self.address = address
        self.timeout = timeout
        parser = RESPParser(limits: limits)
        self.onPush = onPush
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let request = unwrapOutboundIn(data)
        if let failure {
            request.promise.fail(failure)
            promise?.succeed()
            return
        }
        pending.append(request)
        if pending.count == 1 { armTimer(context: context) }
        context.write(wrapOutboundOut(request.bytes), promise: promise)
        if !flushScheduled {
            flushScheduled = true
            context.eventLoop.assumeIsolated().execute {
                self.flushScheduled = false
                context.flush()
            }
        }
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        var incoming = unwrapInboundIn(data)
        if cumulation == nil || cumulation!.readableBytes == 0 {
            cumulation = incoming
        } else {
            cumulation!.writeBuffer(&incoming)
        }
        do {
            while let value = try parser.next(from: &cumulation!) {
                deliver(value, context: context)
            }
        } catch {
            fail(.protocolError(error), context: context)
            return
        }
        if cumulation!.readableBytes == 0 {
            cumulation = nil
        } else if cumulation!.readerIndex > 64 << 10 {
            cumulation!.discardReadBytes()
        }
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
        replies.append(value)
        guard replies.count == head.replyCount else { return }
        pending.removeFirst()
        let done = replies
        replies = []
        replies.reserveCapacity(1)
        head.promise.succeed(done)
        armTimer(context: context)
    }

    /// Times the request now at the head of the queue, or stops timing when none is.
    private func armTimer(context: ChannelHandlerContext) {
        timer?.cancel()
        timer = nil
        guard let head = pending.first else { return }
        timer = context.eventLoop.assumeIsolated().scheduleTask(deadline: head.deadline) { [self] in
            self.fail(.timeout(self.address, self.timeout), context: context)
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
        for request in failed { request.promise.fail(error) }
        context?.close(promise: nil)
    }
}
