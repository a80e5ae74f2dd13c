import NIOCore

/// One value of the Redis serialization protocol, RESP2 or RESP3.
///
/// Bulk payloads stay slices of the buffer they arrived in (no copy); the
/// accessors turn them into bytes or strings when a caller asks.
///
/// ```swift
/// let reply = try await connection.send(["GET", "user:1"])   // a RedisConnection
/// if let bytes = reply.bytes { print(bytes.count) }
/// ```
public enum RESPValue: Sendable, Equatable {
    /// `+OK`: a simple string.
    case simpleString(String)
    /// `-ERR …` or a RESP3 blob error: the server refused the command.
    case error(String)
    /// `:42`: a signed 64-bit integer.
    case integer(Int64)
    /// `$3\r\nfoo`: a binary-safe string.
    case bulkString(ByteBuffer)
    /// `$-1`, `*-1` or RESP3's `_`: no value.
    case null
    /// `*2 …`: an ordered list of values.
    case array([RESPValue])
    /// RESP3 `%`: key-value pairs in the order sent.
    case map([RESPValue], [RESPValue])
    /// RESP3 `~`: an unordered collection.
    case set([RESPValue])
    /// RESP3 `>`: an out-of-band message (invalidations, pub/sub), never a reply.
    case push([RESPValue])
    /// RESP3 `,`: a double.
    case double(Double)
    /// RESP3 `#`: a boolean.
    case boolean(Bool)
    /// RESP3 `(`: an integer too large for 64 bits, as its decimal digits.
    case bigNumber(String)
    /// RESP3 `=`: text with a three-letter format (`txt`, `mkd`), the format dropped.
    case verbatimString(String)

    /// The value as bytes: bulk, simple and verbatim strings; nil otherwise.
    public var bytes: [UInt8]? {
        switch self {
        case let .bulkString(buffer): return Array(buffer.readableBytesView)
        case let .simpleString(text), let .verbatimString(text): return Array(text.utf8)
        default: return nil
        }
    }

    /// The value as UTF-8 text: strings of any kind and integers; nil otherwise.
    public var string: String? {
        switch self {
        case let .bulkString(buffer): return String(buffer: buffer)
        case let .simpleString(text), let .verbatimString(text), let .bigNumber(text): return text
        case let .integer(number): return String(number)
        default: return nil
        }
    }

    /// The value as an integer: integers and decimal strings; nil otherwise.
    public var integer: Int64? {
        switch self {
        case let .integer(number): return number
        case .bulkString, .simpleString: return string.flatMap { Int64($0) }
        default: return nil
        }
    }

    /// The elements of an array, set or push; nil otherwise.
    public var elements: [RESPValue]? {
        switch self {
        case let .array(values), let .set(values), let .push(values): return values
        default: return nil
        }
    }

    /// Whether this is `null`.
    public var isNull: Bool { self == .null }
}
