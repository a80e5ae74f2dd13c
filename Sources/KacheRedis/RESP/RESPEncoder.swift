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
    ///
    /// The command is measured first and then written in one pass into
    /// memory reserved for all of it. A `ByteBuffer` checks exclusive access
    /// to its storage at run time on every call, and a SET written with one
    /// call per marker, digit and argument spent a tenth of an event loop's
    /// time in those checks.
    /// - Complexity: O(n) in the arguments' bytes.
    public static func writeCommand(_ arguments: [RESPArgument], into buffer: inout ByteBuffer) {
        var size = 1 + decimalLength(arguments.count) + 2
        for argument in arguments {
            let count = argument.byteCount
            size += 1 + decimalLength(count) + 2 + count + 2
        }
        buffer.writeWithUnsafeMutableBytes(minimumWritableBytes: size) { target in
            var cursor = Cursor(target: target)
            cursor.header(UInt8(ascii: "*"), arguments.count)
            for argument in arguments {
                cursor.header(UInt8(ascii: "$"), argument.byteCount)
                argument.withBytes { cursor.copy($0) }
                cursor.lineEnd()
            }
            assert(cursor.offset == size, "the measured size is the written size")
            return size
        }
    }

    /// How many decimal digits `number` (≥ 0) takes.
    private static func decimalLength(_ number: Int) -> Int {
        var digits = 1
        var rest = number
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        return digits
    }

    /// Writes a measured command into raw memory, front to back.
    private struct Cursor {
        let target: UnsafeMutableRawBufferPointer
        var offset = 0

        /// A type marker, a count or a length in decimal, and CRLF.
        mutating func header(_ marker: UInt8, _ number: Int) {
            assert(number >= 0, "a count or a length")
            target[offset] = marker
            let digits = RESPEncoder.decimalLength(number)
            var rest = number
            for index in stride(from: offset + digits, to: offset, by: -1) {
                target[index] = UInt8(truncatingIfNeeded: 0x30 + rest % 10)
                rest /= 10
            }
            offset += 1 + digits
            lineEnd()
        }

        mutating func copy(_ bytes: UnsafeRawBufferPointer) {
            precondition(offset + bytes.count <= target.count, "an argument longer than measured")
            UnsafeMutableRawBufferPointer(rebasing: target[offset..<offset + bytes.count]).copyMemory(from: bytes)
            offset += bytes.count
        }

        mutating func lineEnd() {
            target[offset] = 0x0D
            target[offset + 1] = 0x0A
            offset += 2
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

    /// How many bytes the argument is on the wire.
    var byteCount: Int {
        switch storage {
        case let .text(text): text.utf8.count
        case let .bytes(bytes): bytes.readableBytes
        case let .data(data): data.count
        }
    }

    /// The argument's bytes, for hashing a key to its slot and for writing it.
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
