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
        }
    }

    /// Whether the command may not have reached the server at all, so that
    /// retrying it elsewhere cannot apply it twice.
    var commandSurelyNotSent: Bool {
        switch self {
        case .connectFailed, .nodeBackingOff, .slotUnassigned, .topologyUnavailable: return true
        default: return false
        }
    }

    /// Whether the failure is the node's or the network's (worth a topology
    /// refresh and a retry), rather than the command's.
    var isConnectionFailure: Bool {
        switch self {
        case .timeout, .connectionClosed, .connectFailed, .nodeBackingOff, .protocolError: return true
        default: return false
        }
    }
}
