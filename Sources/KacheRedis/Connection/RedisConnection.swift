import NIOCore
import NIOPosix
import NIOSSL
import Synchronization

/// One TCP connection to one Redis node, speaking RESP3 when the server
/// accepts `HELLO 3` (Redis 6 and later) and RESP2 otherwise; over TLS when
/// the options hold a ``RedisTLSConfiguration``, and authenticated when they
/// hold ``RedisCredentials``.
///
/// Any number of tasks may send on it at once: their commands are pipelined
/// (written without waiting for earlier replies) and each gets its own replies.
///
/// ```swift
/// let connection = try await RedisConnection.connect(to: NodeAddress(host: "127.0.0.1", port: 7000), options: .init())
/// let pong = try await connection.send(["PING"])
/// ```
public final class RedisConnection: Sendable {
    /// The node this connection talks to.
    public let address: NodeAddress
    /// 3 when `HELLO 3` succeeded, else 2.
    public let protocolVersion: Int
    private let channel: any Channel
    private let handler: NIOLoopBound<RedisChannelHandler>
    private let timeout: Duration
    private let outbox: RequestOutbox

    /// What a connection needs to know before it opens.
    public struct Options: Sendable {
        /// How long a command may wait for its reply.
        public var commandTimeout: Duration
        /// How long the TCP connect (and the `HELLO` that follows) may take.
        public var connectTimeout: Duration
        /// Bounds on what the parser accepts.
        public var limits: RESPLimits
        /// Ask for RESP3 with `HELLO 3`.
        public var prefersRESP3: Bool
        /// Who to authenticate as when the connection opens; nil for no `AUTH`.
        public var credentials: RedisCredentials?
        /// TLS for the connection; nil for plain TCP.
        public var tls: RedisTLSConfiguration?

        /// Creates options.
        public init(commandTimeout: Duration = .seconds(1), connectTimeout: Duration = .milliseconds(500),
                    limits: RESPLimits = RESPLimits(), prefersRESP3: Bool = true,
                    credentials: RedisCredentials? = nil, tls: RedisTLSConfiguration? = nil) {
            self.commandTimeout = commandTimeout
            self.connectTimeout = connectTimeout
            self.limits = limits
            self.prefersRESP3 = prefersRESP3
            self.credentials = credentials
            self.tls = tls
        }
    }

    private init(address: NodeAddress, protocolVersion: Int, channel: any Channel, handler: NIOLoopBound<RedisChannelHandler>, timeout: Duration) {
        self.address = address
        self.protocolVersion = protocolVersion
        self.channel = channel
        self.handler = handler
        self.timeout = timeout
        outbox = RequestOutbox(allocator: channel.allocator)
    }

    /// Opens a connection to `address` (TLS first, when configured),
    /// authenticates and negotiates the protocol (see ``RedisConnection/Options``).
    /// `onPush` receives the RESP3 push messages the node sends (invalidations).
    /// - Throws: ``RedisClientError/connectFailed(_:reason:)``, ``RedisClientError/timeout(_:_:)``;
    ///   ``RedisClientError/authenticationFailed(_:username:)`` or ``RedisClientError/authenticationRequired(_:)``
    ///   when the node refuses; ``RedisClientError/certificateNotTrusted(_:reason:)``,
    ///   ``RedisClientError/serverNameMismatch(_:expected:)`` or ``RedisClientError/tlsHandshakeFailed(_:reason:)``
    ///   when TLS fails.
    public static func connect(
        to address: NodeAddress, options: Options,
        group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        onPush: @escaping @Sendable (RESPValue) -> Void = { _ in }
    ) async throws(RedisClientError) -> RedisConnection {
        let timeout = options.commandTimeout
        let limits = options.limits
        let tls = options.tls
        let bootstrap = ClientBootstrap(group: group)
            .channelOption(.socketOption(.tcp_nodelay), value: 1)
            .connectTimeout(.nanoseconds(options.connectTimeout.nanoseconds))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls {
                        try pipeline.addHandler(NIOSSLClientHandler(context: tls.context, serverHostname: tls.expectedServerName(for: address)))
                        try pipeline.addHandler(TLSFailureNaming(address: address, checkedName: tls.checkedName(for: address)))
                    }
                    try pipeline.addHandler(RedisChannelHandler(address: address, timeout: timeout, limits: limits, onPush: onPush))
                }
            }
        let channel: any Channel
        let handler: NIOLoopBound<RedisChannelHandler>
        do {
            (channel, handler) = try await bootstrap.connect(host: address.host, port: address.port).flatMapThrowing { channel in
                let handler = try channel.pipeline.syncOperations.handler(type: RedisChannelHandler.self)
                return (channel, NIOLoopBound(handler, eventLoop: channel.eventLoop))
            }.get()
        } catch {
            throw .connectFailed(address, reason: String(describing: error))
        }
        // The handshake's replies are bounded by the connect timeout, not the command timeout.
        let opening = RedisConnection(address: address, protocolVersion: 2, channel: channel, handler: handler, timeout: options.connectTimeout)
        let protocolVersion: Int
        do {
            protocolVersion = try await opening.negotiate(credentials: options.credentials, prefersRESP3: options.prefersRESP3)
        } catch {
            opening.close()
            throw error
        }
        return RedisConnection(address: address, protocolVersion: protocolVersion, channel: channel, handler: handler, timeout: timeout)
    }

    /// Whether the connection is still open.
    public var isActive: Bool { channel.isActive }

    /// The event loop the connection's reads and writes run on.
    var eventLoop: any EventLoop { channel.eventLoop }

    /// Sends one command and returns its reply. An error reply is returned as
    /// `.error`, not thrown: the cluster client reads redirections from it.
    /// - Throws: ``RedisClientError/timeout(_:_:)``, ``RedisClientError/connectionClosed(_:)``,
    ///   ``RedisClientError/protocolError(_:)``.
    public func sendRaw(_ command: [RESPArgument]) async throws(RedisClientError) -> RESPValue {
        let deadline = self.deadline()
        var request: RedisRequest?
        // The handler resumes this continuation itself when the reply is read.
        let outcome = await withCheckedContinuation { (continuation: CheckedContinuation<Result<RESPValue, RedisClientError>, Never>) in
            let made = RedisRequest(replyCount: 1, receiver: .one(continuation), deadline: deadline)
            request = made
            submit(made) { bytes in
                RESPEncoder.writeCommand(command, into: &bytes)
            }
        }
        request?.awaitHandOff()
        return try outcome.get()
    }

    /// Sends commands back to back in one write and returns their replies in order.
    public func sendRaw(batch commands: [[RESPArgument]]) async throws(RedisClientError) -> [RESPValue] {
        let replies = PendingReplies(parts: 1)
        enqueue(batch: commands, into: replies, part: 0)
        return try await replies.values()[0].get()
    }

    /// Writes `commands` now, their replies to complete part `part` of
    /// `replies`, so a caller can put batches on several connections before
    /// it awaits them all at once.
    func enqueue(batch commands: [[RESPArgument]], into replies: PendingReplies, part: Int) {
        guard !commands.isEmpty else { return replies.complete(part: part, with: .success([])) }
        submit(RedisRequest(replyCount: commands.count, receiver: .many(replies, part: part), deadline: deadline())) { bytes in
            for command in commands { RESPEncoder.writeCommand(command, into: &bytes) }
        }
    }

    private func deadline() -> NIODeadline {
        .now() + .nanoseconds(timeout.nanoseconds)
    }

    /// Encodes the request's commands into the outbox from the caller's
    /// thread; the first request of a burst schedules the one event-loop task
    /// that writes them all. From the loop's own thread (a task in
    /// ``RedisClusterClient/withEventLoopAffinity(isolation:_:)``) scheduling
    /// wakes nothing: the write runs later in the same pass of the loop, with
    /// whatever other tasks added meanwhile.
    private func submit(_ request: RedisRequest, encode: (inout ByteBuffer) -> Void) {
        guard outbox.add(request, encode: encode) else { return }
        channel.eventLoop.execute { [handler, outbox] in
            let (bytes, requests) = outbox.take()
            handler.value.write(bytes, for: requests)
        }
    }

    /// Sends one command; an error reply is thrown as ``RedisClientError/server(_:)``.
    @discardableResult
    public func send(_ command: [RESPArgument]) async throws(RedisClientError) -> RESPValue {
        let reply = try await sendRaw(command)
        if case let .error(message) = reply { throw .server(message) }
        return reply
    }

    /// Closes the connection; commands in flight fail with ``RedisClientError/connectionClosed(_:)``.
    public func close() {
        channel.close(promise: nil)
    }
}

extension Duration {
    /// Whole nanoseconds, saturating.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1_000_000_000)
        if overflow { return seconds > 0 ? .max : .min }
        return scaled.addingReportingOverflow(attoseconds / 1_000_000_000).partialValue
    }
}
