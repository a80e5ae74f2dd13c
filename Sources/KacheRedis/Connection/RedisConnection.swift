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
    private let timeout: Duration
    private let outbox: Outbox

    /// Requests submitted from outside the event loop, written there in one
    /// go: a burst of concurrent sends costs one hop to the loop, not one each.
    private final class Outbox: Sendable {
        private let state = Mutex<(requests: [RedisRequest], isScheduled: Bool)>(([], false))

        /// Adds `request`; true when the caller must schedule a drain.
        func add(_ request: RedisRequest) -> Bool {
            state.withLock { state in
                state.requests.append(request)
                defer { state.isScheduled = true }
                return !state.isScheduled
            }
        }

        /// Everything submitted so far.
        func take() -> [RedisRequest] {
            state.withLock { state in
                state.isScheduled = false
                defer { state.requests.removeAll(keepingCapacity: true) }
                return state.requests
            }
        }
    }

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

    private init(address: NodeAddress, protocolVersion: Int, channel: any Channel, timeout: Duration) {
        self.address = address
        self.protocolVersion = protocolVersion
        self.channel = channel
        self.timeout = timeout
        outbox = Outbox()
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
        do {
            channel = try await bootstrap.connect(host: address.host, port: address.port).get()
        } catch {
            throw .connectFailed(address, reason: String(describing: error))
        }
        // The handshake's replies are bounded by the connect timeout, not the command timeout.
        let opening = RedisConnection(address: address, protocolVersion: 2, channel: channel, timeout: options.connectTimeout)
        let protocolVersion: Int
        do {
            protocolVersion = try await opening.negotiate(credentials: options.credentials, prefersRESP3: options.prefersRESP3)
        } catch {
            opening.close()
            throw error
        }
        return RedisConnection(address: address, protocolVersion: protocolVersion, channel: channel, timeout: timeout)
    }

    /// Whether the connection is still open.
    public var isActive: Bool { channel.isActive }

    /// Sends one command and returns its reply. An error reply is returned as
    /// `.error`, not thrown: the cluster client reads redirections from it.
    /// - Throws: ``RedisClientError/timeout(_:_:)``, ``RedisClientError/connectionClosed(_:)``,
    ///   ``RedisClientError/protocolError(_:)``.
    public func sendRaw(_ command: [RESPArgument]) async throws(RedisClientError) -> RESPValue {
        try await sendRaw(batch: [command])[0]
    }

    /// Sends commands back to back in one write and returns their replies in order.
    public func sendRaw(batch commands: [[RESPArgument]]) async throws(RedisClientError) -> [RESPValue] {
        try await Self.replies(enqueue(batch: commands), from: address)
    }

    /// Writes `commands` now and returns the future of their replies, so a
    /// caller can put batches on several connections before awaiting any.
    func enqueue(batch commands: [[RESPArgument]]) -> EventLoopFuture<[RESPValue]> {
        var bytes = channel.allocator.buffer(capacity: 64 * commands.count)
        for command in commands { RESPEncoder.writeCommand(command, into: &bytes) }
        let promise = channel.eventLoop.makePromise(of: [RESPValue].self)
        submit(RedisRequest(
            bytes: bytes, replyCount: commands.count, promise: promise,
            deadline: .now() + .nanoseconds(timeout.nanoseconds)
        ))
        return promise.futureResult
    }

    /// Awaits replies enqueued on the connection to `address`.
    static func replies(_ future: EventLoopFuture<[RESPValue]>, from address: NodeAddress) async throws(RedisClientError) -> [RESPValue] {
        do {
            return try await future.get()
        } catch let error as RedisClientError {
            throw error
        } catch {
            throw .connectionClosed(address)
        }
    }

    private func submit(_ request: RedisRequest) {
        if channel.eventLoop.inEventLoop {
            channel.write(request, promise: nil)
            return
        }
        guard outbox.add(request) else { return }
        channel.eventLoop.execute { [channel, outbox] in
            for request in outbox.take() { channel.write(request, promise: nil) }
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
