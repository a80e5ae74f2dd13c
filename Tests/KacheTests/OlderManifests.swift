import Foundation
import KacheStorage
@testable import Kache

extension Manifest {
    /// The manifest as versions 3 to 6 laid it out: versions 5 and 6 as 7 does,
    /// version 4 ended with
    /// `liveCount u32` and a varint per settled sequence (each less the one
    /// before), version 3 with nothing after the key spaces. Written here by
    /// hand from docs/FORMAT.md, so that the reader is checked against the
    /// old layout rather than against the writer it replaced.
    func encoded(asVersion version: UInt16) -> [UInt8] {
        precondition((3 ... 6).contains(version) && (version != 3 || settled.isEmpty), "version 3 lists no settled sequences")
        var bytes = encoded()
        guard version < 5 else {
            bytes.withUnsafeMutableBytes { $0.storeBytes(of: version.littleEndian, toByteOffset: 12, as: UInt16.self) }
            return Manifest.resealed(bytes)
        }
        bytes.removeLast(settled.encoded().count)
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: version.littleEndian, toByteOffset: 12, as: UInt16.self) }
        if version == 4 {
            let sequences = settled.runs.flatMap { Array($0) }
            bytes.appendInteger(UInt32(sequences.count))
            var previous: UInt64 = 0
            for sequence in sequences {
                bytes.appendVarint(sequence - previous)
                previous = sequence
            }
        }
        return Manifest.resealed(bytes)
    }

    /// `bytes` with the checksum of what follows it, so that a hand-made
    /// body reaches the parser behind the checksum.
    static func resealed(_ bytes: [UInt8]) -> [UInt8] {
        var bytes = bytes
        let checksum = bytes.withUnsafeBytes { XXHash64.hash(UnsafeRawBufferPointer(rebasing: $0[Manifest.bodyOffset...])) }
        bytes.withUnsafeMutableBytes { $0.storeBytes(of: checksum.littleEndian, toByteOffset: Manifest.checksumOffset, as: UInt64.self) }
        return bytes
    }
}
