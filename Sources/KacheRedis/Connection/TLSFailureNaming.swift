import NIOCore
import NIOSSL

/// Sits between swift-nio-ssl's handler and ``RedisChannelHandler`` and
/// turns the TLS library's errors into the ``RedisClientError`` a caller can
/// act on: an untrusted certificate, a certificate for another name, or
/// another handshake failure. Other errors pass unchanged.
final class TLSFailureNaming: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    private let address: NodeAddress
    private let checkedName: String

    init(address: NodeAddress, checkedName: String) {
        self.address = address
        self.checkedName = checkedName
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        context.fireErrorCaught(Self.name(error, address: address, checkedName: checkedName) ?? error)
    }

    /// The client error `error` stands for, or nil when it is no TLS error.
    static func name(_ error: any Error, address: NodeAddress, checkedName: String) -> RedisClientError? {
        if let extra = error as? NIOSSLExtraError {
            if extra == .failedToValidateHostname { return .serverNameMismatch(address, expected: checkedName) }
            return .tlsHandshakeFailed(address, reason: String(describing: extra))
        }
        if let failure = error as? NIOSSLError {
            // BoringSSL names every failed chain check CERTIFICATE_VERIFY_FAILED
            // (an unknown CA, an expired or malformed certificate).
            if case let .handshakeFailed(reason) = failure, String(describing: reason).contains("CERTIFICATE_VERIFY_FAILED") {
                return .certificateNotTrusted(address, reason: String(describing: reason))
            }
            return .tlsHandshakeFailed(address, reason: String(describing: failure))
        }
        if error is BoringSSLError { return .tlsHandshakeFailed(address, reason: String(describing: error)) }
        return nil
    }
}
