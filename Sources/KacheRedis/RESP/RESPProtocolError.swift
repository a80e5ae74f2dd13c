/// Why bytes received are not valid RESP. The connection that read them is
/// closed: nothing after a framing error can be trusted to line up.
public enum RESPProtocolError: Error, Equatable, Sendable, CustomStringConvertible {
    /// A type byte that is not one of RESP2's or RESP3's.
    case unknownType(UInt8)
    /// A length or integer field that is not a decimal number.
    case invalidNumber
    /// A line or bulk string not followed by CRLF.
    case missingLineEnd
    /// A bulk string or aggregate longer than the limits allow.
    case tooLong(length: Int, limit: Int)
    /// Aggregates nested deeper than the limit.
    case tooDeep(limit: Int)
    /// A line that ran past the limit without a CRLF.
    case lineTooLong(limit: Int)
    /// A RESP3 boolean other than `t` or `f`, or a double that does not parse.
    case invalidScalar

    /// The error as a sentence.
    public var description: String {
        switch self {
        case let .unknownType(byte): return "unknown RESP type byte 0x\(String(byte, radix: 16))"
        case .invalidNumber: return "a RESP length or integer is not a decimal number"
        case .missingLineEnd: return "a RESP line or bulk string is not followed by CRLF"
        case let .tooLong(length, limit): return "a RESP value announces \(length) bytes or elements, over the limit of \(limit)"
        case let .tooDeep(limit): return "RESP aggregates are nested deeper than \(limit)"
        case let .lineTooLong(limit): return "a RESP line runs past \(limit) bytes without CRLF"
        case .invalidScalar: return "a RESP3 boolean or double is malformed"
        }
    }
}
