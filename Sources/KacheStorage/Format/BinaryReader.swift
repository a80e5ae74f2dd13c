import Foundation

/// Reads little-endian fields from untrusted bytes. Every read is bounds
/// checked and throws `BinaryReader.Truncated` instead of trapping, so that a
/// damaged or hostile file can never crash the process.
package struct BinaryReader {
    package struct Truncated: Error {}

    private let bytes: UnsafeRawBufferPointer
    package private(set) var offset: Int

    package init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    package var remaining: Int { bytes.count - offset }

    private mutating func read<T: FixedWidthInteger>(as _: T.Type) throws -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw Truncated() }
        defer { offset += size }
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    // One non-generic read per field type: the engine decodes the manifest
    // with these, several reads an entry, and a call of the generic `read`
    // from another module runs unspecialized (a metadata lookup a field),
    // which doubled the time to open a cache of 100,000 entries.
    package mutating func read(_: UInt8.Type = UInt8.self) throws -> UInt8 { try read(as: UInt8.self) }
    package mutating func read(_: UInt16.Type = UInt16.self) throws -> UInt16 { try read(as: UInt16.self) }
    package mutating func read(_: UInt32.Type = UInt32.self) throws -> UInt32 { try read(as: UInt32.self) }
    package mutating func read(_: UInt64.Type = UInt64.self) throws -> UInt64 { try read(as: UInt64.self) }
    package mutating func read(_: Int64.Type = Int64.self) throws -> Int64 { try read(as: Int64.self) }

    package mutating func readBytes(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, remaining >= count else { throw Truncated() }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset ..< offset + count])
    }

    /// Reads a length-prefixed UTF-8 string; invalid UTF-8 throws.
    package mutating func readShortString() throws -> String {
        let count = Int(try read(UInt16.self))
        let raw = try readBytes(count)
        guard let string = String(validating: raw, as: UTF8.self) else { throw Truncated() }
        return string
    }
}
