import Foundation
import KacheStorage

/// Raw keys sections written by hand from docs/FORMAT.md, in both layouts a
/// block of today's header may hold, and the raw sections of a sealed block:
/// so that the readers are checked against the documented layouts rather
/// than against the writer, and fed sections no writer would make.
enum BlockSections {
    /// One record's fields as a keys section holds them.
    struct Fields {
        var flags: UInt8 = 0
        var space: UInt64 = 0
        var key: [UInt8]
        /// Milliseconds above the base expiry.
        var expiryOffset: UInt64
        var sequence: UInt64
        var valueLength: UInt64
    }

    /// The bases and key-space list both layouts start with.
    static func prelude(baseExpiry: Int64, baseSequence: UInt64, spaces: [(kind: UInt8, name: String)]) -> [UInt8] {
        var bytes = [UInt8]()
        bytes.appendInteger(baseExpiry)
        bytes.appendInteger(baseSequence)
        bytes.appendVarint(UInt64(spaces.count))
        for space in spaces {
            bytes.append(space.kind)
            bytes.appendVarint(UInt64(space.name.utf8.count))
            bytes.append(contentsOf: space.name.utf8)
        }
        return bytes
    }

    static func zigzag(_ difference: UInt64) -> UInt64 {
        let signed = Int64(bitPattern: difference)
        return UInt64(bitPattern: (signed << 1) ^ (signed >> 63))
    }

    /// Format version 6's columns ("KBL3"). `shared` overrides the bytes
    /// each key shares with the one before (nil: as many as they do share),
    /// and `milliseconds` the remainder column, to make damage.
    static func columns(
        _ records: [Fields], baseSequence: UInt64, shared: [UInt64]? = nil, milliseconds: [UInt64]? = nil
    ) -> [UInt8] {
        var bytes = [UInt8]()
        for record in records { bytes.append(record.flags) }
        for record in records { bytes.appendVarint(record.space) }
        var previous: [UInt8] = []
        let sharing = records.map { record in
            defer { previous = record.key }
            return zip(previous, record.key).prefix { $0 == $1 }.count
        }
        for record in records { bytes.appendVarint(UInt64(record.key.count)) }
        for (index, count) in sharing.enumerated() { bytes.appendVarint(shared?[index] ?? UInt64(count)) }
        for (record, count) in zip(records, sharing) { bytes += record.key.dropFirst(count) }
        for record in records { bytes.appendVarint(record.expiryOffset / 1000) }
        for (index, record) in records.enumerated() { bytes.appendVarint(milliseconds?[index] ?? record.expiryOffset % 1000) }
        var previousSequence = baseSequence
        for record in records {
            bytes.appendVarint(zigzag(record.sequence &- previousSequence))
            previousSequence = record.sequence
        }
        for record in records { bytes.appendVarint(record.valueLength) }
        return bytes
    }

    /// Format version 5's rows ("KBL2"): each record's fields together.
    static func rows(_ records: [Fields], baseSequence: UInt64) -> [UInt8] {
        var bytes = [UInt8]()
        var previousSequence = baseSequence
        for record in records {
            bytes.append(record.flags)
            bytes.appendVarint(record.space)
            bytes.appendVarint(UInt64(record.key.count))
            bytes += record.key
            bytes.appendVarint(record.expiryOffset)
            bytes.appendVarint(zigzag(record.sequence &- previousSequence))
            previousSequence = record.sequence
            bytes.appendVarint(record.valueLength)
        }
        return bytes
    }

    /// `records` in a block of format version 5 ("KBL2"): keys in rows.
    static func version5Block(_ records: [SegmentBlock.Record]) -> Data {
        let (prelude, fields, baseSequence) = layout(records)
        return SegmentBlock.seal(
            keys: prelude + rows(fields, baseSequence: baseSequence), values: records.flatMap { [UInt8]($0.value) },
            count: records.count, compression: .fast, magic: SegmentBlock.rowsMagic
        )
    }

    /// `records` in a block of format version 6 ("KBL3"): keys in
    /// columns, one checksum of the whole block.
    static func version6Block(_ records: [SegmentBlock.Record]) -> Data {
        let (prelude, fields, baseSequence) = layout(records)
        return SegmentBlock.seal(
            keys: prelude + columns(fields, baseSequence: baseSequence), values: records.flatMap { [UInt8]($0.value) },
            count: records.count, compression: .fast, magic: SegmentBlock.version6Magic
        )
    }

    /// `records` in a block of today's format ("KBL4"): its keys section
    /// written from the document, and its header too (the two checksums),
    /// around the sections as the writer stored them.
    static func currentBlock(_ records: [SegmentBlock.Record]) -> Data {
        var block = Array("KBL4".utf8) + [UInt8](repeating: 0, count: 8) + [UInt8](version6Block(records)).dropFirst(12)
        block.withUnsafeMutableBytes(reseal)
        return Data(block)
    }

    /// Makes both checksums of a block of today's format right for its
    /// bytes, as the document says (a keys section its header says is longer
    /// than the block is taken to the end), so that a test's changes reach
    /// the checks behind them.
    static func reseal(_ raw: UnsafeMutableRawBufferPointer) {
        let keysStored = Int(UInt32(littleEndian: raw.loadUnaligned(fromByteOffset: 12, as: UInt32.self)))
        let keysEnd = min(32 + keysStored, raw.count)
        let keys = UInt32(truncatingIfNeeded: XXHash64.hash(UnsafeRawBufferPointer(rebasing: raw[12 ..< keysEnd])))
        let values = UInt32(truncatingIfNeeded: XXHash64.hash(UnsafeRawBufferPointer(rebasing: raw[keysEnd...])))
        raw.storeBytes(of: keys.littleEndian, toByteOffset: 4, as: UInt32.self)
        raw.storeBytes(of: values.littleEndian, toByteOffset: 8, as: UInt32.self)
    }

    /// The prelude and each record's fields, as both writers lay them out.
    static func layout(_ records: [SegmentBlock.Record]) -> (prelude: [UInt8], fields: [Fields], baseSequence: UInt64) {
        func milliseconds(_ expiry: Int64) -> Int64 {
            let (quotient, remainder) = expiry.quotientAndRemainder(dividingBy: 1_000_000)
            return remainder < 0 ? quotient - 1 : quotient
        }
        let baseExpiry = milliseconds(records.map(\.expiry).min()!)
        let baseSequence = records[0].sequence
        var spaces: [(kind: UInt8, name: String)] = []
        for record in records where !spaces.contains(where: { $0.name == record.space }) { spaces.append((record.kind, record.space)) }
        let fields = records.map { record in
            Fields(
                flags: record.isTombstone ? 1 << 1 : 0, space: UInt64(spaces.firstIndex { $0.name == record.space }!),
                key: Array(record.key.utf8), expiryOffset: UInt64(milliseconds(record.expiry) - baseExpiry),
                sequence: record.sequence, valueLength: UInt64(record.value.count)
            )
        }
        return (prelude(baseExpiry: baseExpiry, baseSequence: baseSequence, spaces: spaces), fields, baseSequence)
    }

    /// The raw keys and values sections of a sealed block of today's header.
    static func raw(_ block: Data) -> (keys: [UInt8], values: [UInt8]) {
        let bytes = [UInt8](block)
        let headerSize = SegmentBlock.headerSize
        func field(_ offset: Int) -> Int { bytes.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: UInt32.self))) } }
        let (keysStored, keysRaw, valuesStored, valuesRaw) = (field(12), field(16), field(20), field(24))
        func section(_ start: Int, stored: Int, raw: Int, compressed: Bool) -> [UInt8] {
            let source = Array(bytes[start ..< start + stored])
            guard compressed else { return source }
            var out = [UInt8](repeating: 0, count: raw)
            let decoded = source.withUnsafeBytes { from in out.withUnsafeMutableBytes { LZ4.decompress(from, into: $0) } }
            precondition(decoded, "a sealed block decompresses")
            return out
        }
        let keys = section(headerSize, stored: keysStored, raw: keysRaw, compressed: bytes[28] & 1 != 0)
        let values = section(headerSize + keysStored, stored: valuesStored, raw: valuesRaw, compressed: bytes[28] & 2 != 0)
        return (keys, values)
    }
}
