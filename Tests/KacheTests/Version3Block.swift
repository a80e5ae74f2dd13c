import Foundation
import KacheStorage

/// Writes a block as format versions 3 and 4 did (magic "KBLK", one body
/// with each value beside its key, expiries to the nanosecond), which no
/// writer makes any more: the fixture for the reader that keeps their
/// directories open.
enum Version3Block {
    static func seal(_ records: [SegmentBlock.Record]) -> Data {
        var body = [UInt8]()
        let baseExpiry = records.map(\.expiry).min()!
        let baseSequence = records.map(\.sequence).min()!
        body.appendInteger(baseExpiry)
        body.appendInteger(baseSequence)
        var spaces: [String] = []
        for record in records where !spaces.contains(record.space) { spaces.append(record.space) }
        body.appendVarint(UInt64(spaces.count))
        for name in spaces {
            body.append(records.first { $0.space == name }!.kind)
            body.appendVarint(UInt64(name.utf8.count))
            body.append(contentsOf: name.utf8)
        }
        for record in records {
            body.append(record.isTombstone ? 1 << 1 : 0)
            body.appendVarint(UInt64(spaces.firstIndex(of: record.space)!))
            body.appendVarint(UInt64(record.key.utf8.count))
            body.append(contentsOf: record.key.utf8)
            body.appendVarint(UInt64(bitPattern: record.expiry &- baseExpiry))
            body.appendVarint(record.sequence &- baseSequence)
            body.appendVarint(UInt64(record.value.count))
            body.append(contentsOf: record.value)
        }
        var stored = [UInt8](repeating: 0, count: body.count)
        let compressed = body.withUnsafeBytes { source in
            stored.withUnsafeMutableBytes { LZ4.compress(source, into: UnsafeMutableRawBufferPointer(rebasing: $0.dropLast())) }
        }
        if let compressed { stored.removeLast(stored.count - compressed) } else { stored = body }
        var block = [UInt8]("KBLK".utf8)
        block.appendInteger(UInt64(0))
        block.appendInteger(UInt32(stored.count))
        block.appendInteger(UInt32(body.count))
        block.append(compressed == nil ? 0 : 1)
        block.append(UInt8(records.count))
        block.appendInteger(UInt16(0))
        block += stored
        let checksum = block.withUnsafeBytes { XXHash64.hash(UnsafeRawBufferPointer(rebasing: $0[12...])) }
        withUnsafeBytes(of: checksum.littleEndian) { block.replaceSubrange(4 ..< 12, with: $0) }
        return Data(block)
    }
}
