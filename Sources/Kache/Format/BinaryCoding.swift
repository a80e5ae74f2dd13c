import Foundation

/// Appends little-endian integers and byte strings to a growing buffer.
/// Used by the manifest; entry files are laid out in place (see `EntryFile`).
struct BinaryWriter {
    private(set) var bytes: [UInt8] = []

    init(reservingCapacity capacity: Int = 0) {
        bytes.reserveCapacity(capacity)
    }

    mutating func write<T: FixedWidthInteger>(_ value: T) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    /// A UTF-8 string prefixed by its length as a `UInt16`.
    mutating func writeShortString(_ string: String) {
        let utf8 = Array(string.utf8)
        precondition(utf8.count <= Int(UInt16.max), "string too long for a short-string field")
        write(UInt16(utf8.count))
        bytes.append(contentsOf: utf8)
    }

    mutating func overwrite<T: FixedWidthInteger>(_ value: T, at offset: Int) {
        withUnsafeBytes(of: value.littleEndian) { raw in
            for (i, byte) in raw.enumerated() { bytes[offset + i] = byte }
        }
    }
}

/// Reads little-endian fields from untrusted bytes. Every read is bounds
/// checked and throws `BinaryReader.Truncated` instead of trapping, so that a
/// damaged or hostile file can never crash the process.
struct BinaryReader {
    struct Truncated: Error {}

    private let bytes: UnsafeRawBufferPointer
    private(set) var offset: Int

    init(_ bytes: UnsafeRawBufferPointer, offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }

    mutating func read<T: FixedWidthInteger>(_: T.Type = T.self) throws -> T {
        let size = MemoryLayout<T>.size
        guard remaining >= size else { throw Truncated() }
        defer { offset += size }
        return T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
    }

    mutating func readBytes(_ count: Int) throws -> UnsafeRawBufferPointer {
        guard count >= 0, remaining >= count else { throw Truncated() }
        defer { offset += count }
        return UnsafeRawBufferPointer(rebasing: bytes[offset ..< offset + count])
    }

    /// Reads a length-prefixed UTF-8 string; invalid UTF-8 throws.
    mutating func readShortString() throws -> String {
        let count = Int(try read(UInt16.self))
        let raw = try readBytes(count)
        guard let string = String(validating: raw, as: UTF8.self) else { throw Truncated() }
        return string
    }
}
