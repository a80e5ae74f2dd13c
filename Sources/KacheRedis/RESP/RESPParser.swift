import NIOCore

/// Reads RESP2 and RESP3 values from a byte stream, one complete value at a time.
///
/// ``next(from:)`` returns nil, and consumes nothing, while the buffer holds only
/// part of a value, so it can be called again as more bytes arrive. Hostile
/// input never traps it: every length is checked against ``RESPLimits`` and
/// against the bytes actually present before anything is allocated, numbers are
/// parsed with overflow checks, and nesting is bounded.
///
/// ```swift
/// var parser = RESPParser()
/// var buffer = ByteBuffer(string: "+OK\r\n:7\r\n")
/// try parser.next(from: &buffer)   // .simpleString("OK")
/// try parser.next(from: &buffer)   // .integer(7)
/// ```
public struct RESPParser: Sendable {
    /// The bounds applied to every value.
    public let limits: RESPLimits

    /// Creates a parser with `limits`.
    public init(limits: RESPLimits = RESPLimits()) {
        self.limits = limits
    }

    /// The next complete value at the front of `buffer`, consumed; nil when
    /// the buffer holds only part of one (then nothing is consumed).
    /// - Throws: ``RESPProtocolError`` when the bytes are not valid RESP.
    /// - Complexity: O(n) in the value's bytes; a value split over k reads is
    ///   re-scanned up to k times, bulk strings excepted (their length is known
    ///   from the header).
    public func next(from buffer: inout ByteBuffer) throws(RESPProtocolError) -> RESPValue? {
        var copy = buffer
        guard let value = try parse(&copy, depth: 0) else { return nil }
        buffer = copy
        return value
    }

    private func parse(_ buffer: inout ByteBuffer, depth: Int) throws(RESPProtocolError) -> RESPValue? {
        guard depth <= limits.maximumDepth else { throw .tooDeep(limit: limits.maximumDepth) }
        guard let type = buffer.readInteger(as: UInt8.self) else { return nil }
        switch type {
        case UInt8(ascii: "+"):
            return try line(&buffer).map { .simpleString(String(buffer: $0)) }
        case UInt8(ascii: "-"):
            return try line(&buffer).map { .error(String(buffer: $0)) }
        case UInt8(ascii: ":"):
            guard let digits = try line(&buffer) else { return nil }
            return .integer(try Self.integer(digits))
        case UInt8(ascii: "$"):
            return try bulk(&buffer).map { $0.map(RESPValue.bulkString) ?? .null }
        case UInt8(ascii: "!"):
            return try bulk(&buffer).map { $0.map { .error(String(buffer: $0)) } ?? .null }
        case UInt8(ascii: "="):
            guard let text = try bulk(&buffer) else { return nil }
            guard var text else { return .null }
            // "txt:" or "mkd:" comes first: the format, which a cache has no use for.
            if text.readableBytes >= 4 { text.moveReaderIndex(forwardBy: 4) }
            return .verbatimString(String(buffer: text))
        case UInt8(ascii: "*"), UInt8(ascii: "~"), UInt8(ascii: ">"):
            guard let count = try aggregateCount(&buffer) else { return nil }
            guard count >= 0 else { return .null }
            guard let values = try elements(count, &buffer, depth: depth) else { return nil }
            switch type {
            case UInt8(ascii: "~"): return .set(values)
            case UInt8(ascii: ">"): return .push(values)
            default: return .array(values)
            }
        case UInt8(ascii: "%"), UInt8(ascii: "|"):
            guard let count = try aggregateCount(&buffer) else { return nil }
            guard count >= 0 else { return .null }
            guard count <= limits.maximumAggregateCount / 2 else { throw .tooLong(length: count, limit: limits.maximumAggregateCount / 2) }
            guard let flat = try elements(count * 2, &buffer, depth: depth) else { return nil }
            if type == UInt8(ascii: "|") {
                // Attributes describe the value that follows; this client reads none of them.
                return try parse(&buffer, depth: depth)
            }
            let keys = stride(from: 0, to: flat.count, by: 2).map { flat[$0] }
            let values = stride(from: 1, to: flat.count, by: 2).map { flat[$0] }
            return .map(keys, values)
        case UInt8(ascii: "_"):
            guard let rest = try line(&buffer) else { return nil }
            guard rest.readableBytes == 0 else { throw .invalidScalar }
            return .null
        case UInt8(ascii: "#"):
            guard let rest = try line(&buffer) else { return nil }
            switch rest.readableBytesView.first {
            case UInt8(ascii: "t") where rest.readableBytes == 1: return .boolean(true)
            case UInt8(ascii: "f") where rest.readableBytes == 1: return .boolean(false)
            default: throw .invalidScalar
            }
        case UInt8(ascii: ","):
            guard let rest = try line(&buffer) else { return nil }
            let text = String(buffer: rest)
            switch text {
            case "inf": return .double(.infinity)
            case "-inf": return .double(-.infinity)
            case "nan": return .double(.nan)
            default:
                guard let number = Double(text) else { throw .invalidScalar }
                return .double(number)
            }
        case UInt8(ascii: "("):
            guard let rest = try line(&buffer) else { return nil }
            let digits = rest.readableBytesView
            let body = digits.first == UInt8(ascii: "-") ? digits.dropFirst() : digits[...]
            guard !body.isEmpty, body.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else { throw .invalidNumber }
            return .bigNumber(String(buffer: rest))
        default:
            throw .unknownType(type)
        }
    }

    /// `count` values in a row, or nil when they are not all here yet. The
    /// array grows as values arrive rather than by the announced count, so an
    /// announced 16 million elements costs nothing until they are really sent.
    private func elements(_ count: Int, _ buffer: inout ByteBuffer, depth: Int) throws(RESPProtocolError) -> [RESPValue]? {
        var values: [RESPValue] = []
        // The shortest value is 3 bytes ("_\r\n"), so the buffer bounds what can be here now.
        values.reserveCapacity(min(count, buffer.readableBytes / 3))
        for _ in 0..<count {
            guard let value = try parse(&buffer, depth: depth + 1) else { return nil }
            values.append(value)
        }
        return values
    }

    /// The bytes up to the next CRLF (which is consumed), or nil without one yet.
    ///
    /// Searched in the buffer's memory in one go: a `ByteBufferView` checks
    /// exclusive access to the buffer's storage at run time for every byte it reads.
    private func line(_ buffer: inout ByteBuffer) throws(RESPProtocolError) -> ByteBuffer? {
        let limit = limits.maximumLineLength
        enum Search { case found(length: Int), missingLineEnd, tooLong, notYet }
        let search = buffer.withUnsafeReadableBytes { bytes -> Search in
            let searched = UnsafeRawBufferPointer(rebasing: bytes.prefix(limit + 2))
            guard let cr = searched.firstIndex(of: UInt8(ascii: "\r")) else {
                return bytes.count > limit + 1 ? .tooLong : .notYet
            }
            guard cr + 1 < bytes.count else { return .notYet }
            return bytes[cr + 1] == UInt8(ascii: "\n") ? .found(length: cr) : .missingLineEnd
        }
        switch search {
        case let .found(length):
            let line = buffer.readSlice(length: length)!
            buffer.moveReaderIndex(forwardBy: 2)
            return line
        case .notYet: return nil
        case .tooLong: throw .lineTooLong(limit: limit)
        case .missingLineEnd: throw .missingLineEnd
        }
    }

    /// A bulk payload: nil when incomplete, `.some(nil)` for RESP2's null (`-1`).
    private func bulk(_ buffer: inout ByteBuffer) throws(RESPProtocolError) -> ByteBuffer?? {
        guard let digits = try line(&buffer) else { return nil }
        let length = try Self.integer(digits)
        if length == -1 { return .some(nil) }
        guard length >= 0 else { throw .invalidNumber }
        guard length <= limits.maximumBulkLength else { throw .tooLong(length: Int(clamping: length), limit: limits.maximumBulkLength) }
        let count = Int(length)
        guard buffer.readableBytes >= count + 2 else { return nil }
        let payload = buffer.readSlice(length: count)!
        guard buffer.readInteger(as: UInt16.self) == 0x0D0A else { throw .missingLineEnd }
        return .some(payload)
    }

    /// An aggregate's announced count (-1 for null), checked against the limit.
    private func aggregateCount(_ buffer: inout ByteBuffer) throws(RESPProtocolError) -> Int? {
        guard let digits = try line(&buffer) else { return nil }
        let count = try Self.integer(digits)
        if count == -1 { return -1 }
        guard count >= 0 else { throw .invalidNumber }
        guard count <= limits.maximumAggregateCount else { throw .tooLong(length: Int(clamping: count), limit: limits.maximumAggregateCount) }
        return Int(count)
    }

    /// A signed decimal integer, overflow checked.
    static func integer(_ digits: ByteBuffer) throws(RESPProtocolError) -> Int64 {
        let value: Int64? = digits.withUnsafeReadableBytes { bytes in
            var view = bytes[...]
            let negative = view.first == UInt8(ascii: "-")
            if negative || view.first == UInt8(ascii: "+") { view = view.dropFirst() }
            guard !view.isEmpty, view.count <= 19 else { return nil }
            var value: Int64 = 0
            for byte in view {
                guard byte >= 0x30, byte <= 0x39 else { return nil }
                let (scaled, o1) = value.multipliedReportingOverflow(by: 10)
                // Accumulated with the sign, so that Int64.min parses too.
                let digit = Int64(byte - 0x30)
                let (sum, o2) = negative ? scaled.subtractingReportingOverflow(digit) : scaled.addingReportingOverflow(digit)
                guard !o1, !o2 else { return nil }
                value = sum
            }
            return value
        }
        guard let value else { throw .invalidNumber }
        return value
    }
}
