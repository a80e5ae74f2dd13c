import Foundation

/// Reads little-endian fields from untrusted bytes. Every read is bounds
/// checked and throws `BinaryReader.Truncated` instead of trapping, so that a
/// damaged or hostile file can never crash the process.
///
/// Public and inlinable for the reason `Locked` is: the engine decodes its
/// manifest with it, several reads an entry, and Swift 6.3 inlines no
/// `package` declaration into another module (each field was a call, and
/// `remaining` one more).
public struct BinaryReader {
    public struct Truncated: Error {
        @inlinable public init() {}
    }

    @usableFromInline let bytes: UnsafeRawBufferPointer
    /// Where the next read starts.
    @inlinable public var offset: Int { position }
    @usableFromInline var position: Int

    @inlinable public init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        position = offset
    }

    @inlinable public var remaining: Int { bytes.count - position }

    @inlinable mutating func read<T: FixedWidthInteger>(as _: T.Type) throws -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw Truncated() }
        defer { position += size }
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: position, as: T.self))
    }

    // One read per field type, so that a call names its type (the default
    // argument lets the type of the result choose).
    @inlinable public mutating func read(_: UInt8.Type = UInt8.self) throws -> UInt8 { try read(as: UInt8.self) }
    @inlinable public mutating func read(_: UInt16.Type = UInt16.self) throws -> UInt16 { try read(as: UInt16.self) }
    @inlinable public mutating func read(_: UInt32.Type = UInt32.self) throws -> UInt32 { try read(as: UInt32.self) }
    @inlinable public mutating func read(_: UInt64.Type = UInt64.self) throws -> UInt64 { try read(as: UInt64.self) }
    @inlinable public mutating func read(_: Int64.Type = Int64.self) throws -> Int64 { try read(as: Int64.self) }

    @inlinable public mutating func readBytes(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, remaining >= count else { throw Truncated() }
        defer { position += count }
        return UnsafeRawBufferPointer(rebasing: bytes[position ..< position + count])
    }

    /// Reads an unsigned LEB128 varint (seven bits a byte, low bits first);
    /// more than ten bytes, or bits past 64, throw.
    ///
    /// Always inlined, its loop apart: an open reads eight varints a record,
    /// most of one byte, and a call each was a twelfth of W8's open. Two
    /// bytes are read inline too: W8's value lengths (200) and expiries
    /// (seconds up to an hour) take two, and the loop cost 63 instructions
    /// each, a seventh of reading a block's keys.
    @inlinable @inline(__always) public mutating func readVarint() throws -> UInt64 {
        if position < bytes.count, bytes[position] < 0x80 {
            defer { position += 1 }
            return UInt64(bytes[position])
        }
        if position + 1 < bytes.count, bytes[position + 1] < 0x80 {
            defer { position += 2 }
            return UInt64(bytes[position] & 0x7F) | UInt64(bytes[position + 1]) << 7
        }
        return try readLongVarint()
    }

    /// Reads `count` varints in a row (a column of them), handing each to
    /// `body` with its index. When each of the next `count` bytes is below
    /// 0x80, every varint is one byte (a column of small numbers: key
    /// lengths, key spaces, sequence steps), and they are read without a
    /// check or a move of the position each: 10 instructions a value fewer.
    @inlinable @inline(__always)
    public mutating func forEachVarint(_ count: Int, _ body: (_ index: Int, _ value: UInt64) throws -> Void) throws {
        guard count <= remaining, Self.isBelow0x80(UnsafeRawBufferPointer(rebasing: bytes[position ..< position + count])) else {
            for index in 0 ..< count { try body(index, try readVarint()) }
            return
        }
        let start = position
        for index in 0 ..< count { try body(index, UInt64(bytes[start + index])) }
        position += count
    }

    /// Whether every byte of `bytes` is below 0x80, eight at a time: the
    /// last eight (or four) read in one load that may overlap the ones
    /// before, so that a short run (W5's blocks hold 7 records, a column
    /// 7 bytes) takes a load or two, not a loop over its bytes.
    @inlinable @inline(__always)
    public static func isBelow0x80(_ bytes: UnsafeRawBufferPointer) -> Bool {
        let count = bytes.count
        if count >= 8 {
            var high: UInt64 = 0
            var offset = 0
            while offset + 8 < count {
                high |= bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            high |= bytes.loadUnaligned(fromByteOffset: count - 8, as: UInt64.self)
            return high & 0x8080_8080_8080_8080 == 0
        }
        if count >= 4 {
            let high = bytes.loadUnaligned(as: UInt32.self) | bytes.loadUnaligned(fromByteOffset: count - 4, as: UInt32.self)
            return high & 0x8080_8080 == 0
        }
        var high: UInt8 = 0
        for byte in bytes { high |= byte }
        return high & 0x80 == 0
    }

    /// `readVarint`'s loop, for a varint of three bytes or more.
    @inlinable @inline(never) mutating func readLongVarint() throws -> UInt64 {
        var value: UInt64 = 0
        var shift: UInt64 = 0
        while true {
            let byte = try read(UInt8.self)
            guard shift < 64, shift < 63 || byte <= 1 else { throw Truncated() }
            value |= UInt64(byte & 0x7F) << shift
            if byte < 0x80 { return value }
            shift += 7
        }
    }

    /// Reads a length-prefixed UTF-8 string; invalid UTF-8 throws.
    @inlinable public mutating func readShortString() throws -> String {
        let count = Int(try read(UInt16.self))
        let raw = try readBytes(count)
        guard let string = String(validUTF8: raw) else { throw Truncated() }
        return string
    }
}
