/// Why a Redis command did not give a reply the caller can use.
public enum RedisClientError: Error, Sendable, CustomStringConvertible {
    /// The server answered with an error reply that is not a redirection.
    case server(String)
    /// No reply came within the command timeout; the connection was closed,
    /// since a late reply would be taken for the next command's.
    case timeout(NodeAddress, Duration)
    /// The connection closed (or never opened) before the reply came.
    case connectionClosed(NodeAddress)
    /// Connecting to a node failed; `reason` is the system's word for it.
    case connectFailed(NodeAddress, reason: String)
    /// The node failed recently and is in its reconnect back-off; no attempt was made.
    case nodeBackingOff(NodeAddress)
    /// The bytes received are not RESP.
    case protocolError(RESPProtocolError)
    /// No node of the slot map, nor any seed, could describe the cluster.
    case topologyUnavailable(reason: String)
    /// No master is known for the slot.
    case slotUnassigned(HashSlot)
    /// `MOVED`, `ASK`, `TRYAGAIN` or `CLUSTERDOWN` kept coming past the retry limit.
    case tooManyRedirections(command: String, last: String)
    /// A reply had a shape the command never gives.
    case unexpectedReply(command: String, reply: RESPValue)
    /// The client was shut down.
    case shutDown
    /// The node refused the credentials (`WRONGPASS`: a wrong password, or
    /// the user is unknown or disabled). Not retried: another try can only
    /// be refused again.
    case authenticationFailed(NodeAddress, username: String)
    /// The node requires a password (`NOAUTH`) and the configuration has none.
    case authenticationRequired(NodeAddress)
    /// The node's TLS certificate does not chain to a CA of the configured
    /// bundle (or is expired, or malformed); `reason` is the TLS library's word for it.
    case certificateNotTrusted(NodeAddress, reason: String)
    /// The node's TLS certificate is valid but names another server than
    /// `expected` (the configured `serverName`, or the node's host).
    case serverNameMismatch(NodeAddress, expected: String)
    /// The TLS handshake failed for another reason (the node speaks no TLS,
    /// or refused this client's certificate); retried like a lost connection.
    case tlsHandshakeFailed(NodeAddress, reason: String)
    /// A TLS file could not be used (see ``RedisTLSConfiguration``).
    case tlsConfigurationInvalid(reason: String)

    /// The error as a sentence.
    public var description: String {
        switch self {
        case let .server(message): return "Redis replied with an error: \(message)"
        case let .timeout(node, limit): return "Redis node \(node) did not reply within \(limit)"
        case let .connectionClosed(node): return "the connection to Redis node \(node) closed before the reply"
        case let .connectFailed(node, reason): return "can't connect to Redis node \(node): \(reason)"
        case let .nodeBackingOff(node): return "Redis node \(node) failed recently and is backing off before it reconnects"
        case let .protocolError(error): return "Redis sent bytes that are not RESP: \(error)"
        case let .topologyUnavailable(reason): return "no Redis node could describe the cluster: \(reason)"
        case let .slotUnassigned(slot): return "no Redis master serves slot \(slot)"
        case let .tooManyRedirections(command, last): return "\(command) was redirected too many times (last: \(last))"
        case let .unexpectedReply(command, reply): return "\(command) gave an unexpected reply: \(reply)"
        case .shutDown: return "the Redis client was shut down"
        case let .authenticationFailed(node, username):
            return "Redis node \(node) refused the credentials of user \"\(username)\" (a wrong password, or the user is unknown or disabled)"
        case let .authenticationRequired(node): return "Redis node \(node) requires a password, and none is configured"
        case let .certificateNotTrusted(node, reason): return "the TLS certificate of Redis node \(node) is not trusted: \(reason)"
        case let .serverNameMismatch(node, expected): return "the TLS certificate of Redis node \(node) is not for \"\(expected)\""
        case let .tlsHandshakeFailed(node, reason): return "the TLS handshake with Redis node \(node) failed: \(reason)"
        case let .tlsConfigurationInvalid(reason): return "the TLS configuration can't be used: \(reason)"
        }
    }

    /// Whether the command may not have reached the server at all, so that
    /// retrying it elsewhere cannot apply it twice.
    var commandSurelyNotSent: Bool {
        switch self {
        case .connectFailed, .nodeBackingOff, .slotUnassigned, .topologyUnavailable, .tlsHandshakeFailed: return true
        default: return false
        }
    }

    /// Whether the node refused this client, or this client the node, for who
    /// either is: credentials or certificates. Retrying can't help, so such a
    /// failure is thrown at once, and repeated while the node backs off.
    var isRefusal: Bool {
        switch self {
        case .authenticationFailed, .authenticationRequired, .certificateNotTrusted, .serverNameMismatch, .tlsConfigurationInvalid: return true
        default: return false
        }
    }

    /// Whether the failure is the node's or the network's (worth a topology
    /// refresh and a retry), rather than the command's.
    var isConnectionFailure: Bool {
        switch self {
        case .timeout, .connectionClosed, .connectFailed, .nodeBackingOff, .protocolError, .tlsHandshakeFailed: return true
        default: return false
        }
    }
}
