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

    package mutating func read<T: FixedWidthInteger>(_: T.Type = T.self) throws -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw Truncated() }
        defer { offset += size }
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

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
