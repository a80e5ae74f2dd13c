import Foundation
import NIOCore

/// Writes commands the way Redis reads them: an array of bulk strings.
///
/// ```swift
/// var buffer = ByteBuffer()
/// RESPEncoder.writeCommand(["SET", "k", "v"], into: &buffer)
/// // *3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n
/// ```
public enum RESPEncoder {
    /// Appends `arguments` as one command to `buffer`.
    /// - Complexity: O(n) in the arguments' bytes.
    public static func writeCommand(_ arguments: [RESPArgument], into buffer: inout ByteBuffer) {
        buffer.writeInteger(UInt8(ascii: "*"))
        writeDecimal(arguments.count, into: &buffer)
        for argument in arguments {
            buffer.writeInteger(UInt8(ascii: "$"))
            switch argument.storage {
            case let .text(text):
                writeDecimal(text.utf8.count, into: &buffer)
                buffer.writeString(text)
            case let .bytes(bytes):
                writeDecimal(bytes.readableBytes, into: &buffer)
                buffer.writeImmutableBuffer(bytes)
            case let .data(data):
                writeDecimal(data.count, into: &buffer)
                data.withUnsafeBytes { _ = buffer.writeBytes($0) }
            }
            buffer.writeInteger(UInt16(0x0D0A))
        }
    }

    /// Appends any RESP3 value (for tests and for servers written in tests).
    public static func writeValue(_ value: RESPValue, into buffer: inout ByteBuffer) {
        func line(_ type: Character, _ text: String) {
            buffer.writeInteger(type.asciiValue!)
            buffer.writeString(text)
            buffer.writeInteger(UInt16(0x0D0A))
        }
        func aggregate(_ type: Character, _ values: [RESPValue]) {
            line(type, String(values.count))
            values.forEach { writeValue($0, into: &buffer) }
        }
        switch value {
        case let .simpleString(text): line("+", text)
        case let .error(text): line("-", text)
        case let .integer(number): line(":", String(number))
        case let .bulkString(bytes):
            line("$", String(bytes.readableBytes))
            buffer.writeImmutableBuffer(bytes)
            buffer.writeInteger(UInt16(0x0D0A))
        case .null: line("_", "")
        case let .array(values): aggregate("*", values)
        case let .set(values): aggregate("~", values)
        case let .push(values): aggregate(">", values)
        case let .map(keys, values):
            line("%", String(keys.count))
            for (key, value) in zip(keys, values) {
                writeValue(key, into: &buffer)
                writeValue(value, into: &buffer)
            }
        case let .double(number):
            line(",", number.isNaN ? "nan" : number == .infinity ? "inf" : number == -.infinity ? "-inf" : String(number))
        case let .boolean(flag): line("#", flag ? "t" : "f")
        case let .bigNumber(digits): line("(", digits)
        case let .verbatimString(text):
            line("=", String(text.utf8.count + 4))
            buffer.writeString("txt:" + text)
            buffer.writeInteger(UInt16(0x0D0A))
        }
    }

    /// Appends a count or a length and CRLF. Its digits are made in place,
    /// right to left: `String(number)` went through the standard library's
    /// generic integer printing, a tenth of a pipelined SET's encoding.
    private static func writeDecimal(_ number: Int, into buffer: inout ByteBuffer) {
        assert(number >= 0, "a count or a length")
        if number < 10 {
            buffer.writeInteger(UInt8(0x30 + number))
            buffer.writeInteger(UInt16(0x0D0A))
            return
        }
        // 20 digits hold any Int, and 2 more CRLF.
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 22) { scratch in
            var start = 20
            scratch[20] = 0x0D
            scratch[21] = 0x0A
            var rest = UInt(number)
            repeat {
                start -= 1
                scratch[start] = UInt8(truncatingIfNeeded: 0x30 + rest % 10)
                rest /= 10
            } while rest > 0
            buffer.writeBytes(UnsafeRawBufferPointer(UnsafeMutableBufferPointer(rebasing: scratch[start...])))
        }
    }
}

/// One argument of a command: text, or bytes sent as they are.
///
/// String literals convert implicitly, so a command reads as `["GET", key]`.
public struct RESPArgument: Sendable, ExpressibleByStringLiteral, ExpressibleByStringInterpolation {
    enum Storage: Sendable {
        case text(String)
        case bytes(ByteBuffer)
        /// Kept as the caller's `Data` until it is encoded: copied once, into the write.
        case data(Data)
    }

    let storage: Storage

    /// Text, sent as UTF-8.
    public init(_ text: String) { storage = .text(text) }
    /// Bytes, sent as they are.
    public init(_ bytes: ByteBuffer) { storage = .bytes(bytes) }
    /// Bytes, sent as they are.
    public init(bytes: some Sequence<UInt8>) { storage = .bytes(ByteBuffer(bytes: bytes)) }
    /// Bytes, sent as they are; copied only when the command is written.
    public init(_ data: Data) { storage = .data(data) }
    /// A decimal integer.
    public init(_ number: Int64) { storage = .text(String(number)) }
    /// Text from a literal.
    public init(stringLiteral text: String) { storage = .text(text) }

    /// The argument's bytes, for hashing a key to its slot.
    func withBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        switch storage {
        case let .text(text):
            var text = text
            return text.withUTF8 { body(UnsafeRawBufferPointer($0)) }
        case let .bytes(bytes):
            return bytes.withUnsafeReadableBytes(body)
        case let .data(data):
            return data.withUnsafeBytes(body)
        }
    }
}
