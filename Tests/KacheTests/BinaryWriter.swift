import Foundation
import KacheStorage

/// Appends little-endian integers and byte strings to a growing buffer: the
/// tests build hand-made (hostile) manifests with it. The engine lays its
/// files out in place (`ManifestEncoder`, `EntryFile`).
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
