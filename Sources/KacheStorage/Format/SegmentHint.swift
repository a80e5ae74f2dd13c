import Foundation

/// The index of a segment file's records, without their values: what
/// opening a directory reads instead of the segment itself. A hint file,
/// `<segment>.hint` beside its segment, is chunks back to back, each listing
/// the records of a run of whole blocks of the segment, in order: a saved
/// `SegmentStore.scan` of the segment's first bytes. Specified in docs/FORMAT.md.
///
/// ```
/// offset size field
///  0      4   magic "KHNT"
///  4      8   checksum: XXH64 (seed 0) of bytes 12 ..< end of chunk
/// 12      4   first: where in the segment the first block it lists starts
/// 16      4   end: where the last one ends
/// 20      8   the checksum of the last block it lists (its bytes 4 ..< 12)
/// 28      4   stored body length
/// 32      4   raw body length
/// 36      1   flags (bit 0: the body is an LZ4 block)
/// 37      3   reserved, zero
/// 40      …   the body, as stored
/// ```
/// The raw body: base expiry (i64), base sequence (u64), the key spaces
/// (a count, then each one's kind and name), then per record: flags (bit 1:
/// tombstone), key-space index, key, expiry and sequence above their bases,
/// its block's offset above the previous record's (0: the same block, the
/// next index), its share of its block, and its value's raw length.
///
/// A hint can be late (the segment goes on past it) or torn, never trusted
/// wrongly: a chunk that does not check out, does not start where the one
/// before ended, reaches past its segment's end, or names a last block whose
/// checksum the segment does not hold there ends the hint, and the segment
/// past the last good chunk is read instead.
package enum SegmentHint {
    package static let magic: [UInt8] = Array("KHNT".utf8)
    package static let headerSize = 40
    /// The most raw body bytes a reader accepts.
    package static let maximumRawLength = 16 << 20
    /// Records a writer gathers before it writes them as a chunk.
    package static let recordsPerChunk = 2048

    private enum Offset {
        static let checksum = 4
        static let checksummed = 12
        static let first = 12
        static let end = 16
        static let lastBlockChecksum = 20
        static let storedLength = 28
        static let rawLength = 32
        static let flags = 36
    }

    private static let compressedFlag: UInt8 = 1 << 0
    private static let tombstoneFlag: UInt8 = 1 << 1

    /// What a chunk lists.
    package struct Chunk: Sendable {
        /// The bytes of the segment its blocks take.
        package var covering: Range<Int>
        /// Where its last block starts, and that block's checksum.
        package var lastBlock: (offset: Int, checksum: UInt64)
        /// Where its records are in the array `decode` filled, in order; a
        /// record of a block holds only its header (`storedLength` is its raw
        /// length, and no flag but the tombstone's is kept).
        package var records: Range<Int>
        /// Its length in the hint file.
        package var size: Int
    }

    /// The checksum of the block (or record of version 2) at the start of `bytes`.
    package static func blockChecksum(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: SegmentBlock.Offset.checksum, as: UInt64.self))
    }

    /// A chunk listing `records`, every record, in order, of the blocks that
    /// take `covering` in their segment, the last of which has `lastBlockChecksum`.
    package static func chunk(_ records: [SegmentStore.ScannedRecord], covering: Range<Int>, lastBlockChecksum: UInt64) -> Data {
        precondition(!records.isEmpty, "an empty chunk")
        var body: [UInt8] = []
        body.reserveCapacity(records.count * 32)
        let baseExpiry = records.lazy.map(\.header.expiry).min()!
        let baseSequence = records.lazy.map(\.header.sequence).min()!
        body.appendInteger(baseExpiry)
        body.appendInteger(baseSequence)
        var spaces: [String: Int] = [:]
        var spaceList: [(name: String, kind: UInt8)] = []
        for record in records where spaces[record.header.space] == nil {
            spaces[record.header.space] = spaceList.count
            spaceList.append((record.header.space, record.header.kind))
        }
        body.appendVarint(UInt64(spaceList.count))
        for (name, kind) in spaceList {
            body.append(kind)
            body.appendVarint(UInt64(name.utf8.count))
            body.append(contentsOf: name.utf8)
        }
        var previous = covering.lowerBound
        for record in records {
            let header = record.header
            precondition(covering.contains(record.offset) && record.offset >= previous, "records in order, within what the chunk covers")
            body.append(header.isTombstone ? tombstoneFlag : 0)
            body.appendVarint(UInt64(spaces[header.space]!))
            body.appendVarint(UInt64(header.key.utf8.count))
            body.append(contentsOf: header.key.utf8)
            body.appendVarint(UInt64(bitPattern: header.expiry &- baseExpiry))
            body.appendVarint(header.sequence &- baseSequence)
            body.appendVarint(UInt64(record.offset - previous))
            body.appendVarint(UInt64(record.length))
            body.appendVarint(UInt64(header.rawLength))
            previous = record.offset
        }
        var chunk = [UInt8](repeating: 0, count: headerSize + body.count)
        let storedLength = chunk.withUnsafeMutableBytes { out in
            body.withUnsafeBytes { source in
                // Stored raw unless LZ4 makes it smaller.
                let room = UnsafeMutableRawBufferPointer(rebasing: out[headerSize ..< headerSize + body.count - 1])
                if let length = LZ4.compress(source, into: room) { return length }
                UnsafeMutableRawBufferPointer(rebasing: out[headerSize...]).copyMemory(from: source)
                return body.count
            }
        }
        chunk.removeLast(chunk.count - headerSize - storedLength)
        chunk.withUnsafeMutableBytes { out in
            magic.withUnsafeBytes { out.copyMemory(from: $0) }
            out.storeBytes(of: UInt32(covering.lowerBound).littleEndian, toByteOffset: Offset.first, as: UInt32.self)
            out.storeBytes(of: UInt32(covering.upperBound).littleEndian, toByteOffset: Offset.end, as: UInt32.self)
            out.storeBytes(of: lastBlockChecksum.littleEndian, toByteOffset: Offset.lastBlockChecksum, as: UInt64.self)
            out.storeBytes(of: UInt32(storedLength).littleEndian, toByteOffset: Offset.storedLength, as: UInt32.self)
            out.storeBytes(of: UInt32(body.count).littleEndian, toByteOffset: Offset.rawLength, as: UInt32.self)
            out.storeBytes(of: storedLength < body.count ? compressedFlag : 0, toByteOffset: Offset.flags, as: UInt8.self)
            let checksum = XXHash64.hash(UnsafeRawBufferPointer(rebasing: out[Offset.checksummed...]))
            out.storeBytes(of: checksum.littleEndian, toByteOffset: Offset.checksum, as: UInt64.self)
        }
        return Data(chunk)
    }

    /// The chunks of a hint file, up to the first that does not check out or
    /// does not start where the one before ended, and where they end in
    /// `bytes`; their records are appended to `records`, in one array for the
    /// whole file (a million records come to a hundred megabytes: no copies).
    /// Checking them against their segment is the caller's: `accept` sees
    /// each chunk as soon as it is decoded, its records just appended (it may
    /// take them out of `records`), and says whether to go on; a chunk it
    /// refuses is the end, its records removed.
    package static func decode(
        _ bytes: Data, into records: inout [SegmentStore.ScannedRecord],
        accept: (Chunk, inout [SegmentStore.ScannedRecord]) -> Bool = { _, _ in true }
    ) -> (chunks: [Chunk], validLength: Int) {
        bytes.withUnsafeBytes { raw in
            var chunks: [Chunk] = []
            var offset = 0
            while offset < raw.count {
                let start = records.count
                guard let chunk = try? decodeChunk(UnsafeRawBufferPointer(rebasing: raw[offset...]), into: &records),
                      chunk.covering.lowerBound == (chunks.last?.covering.upperBound ?? 0),
                      accept(chunk, &records)
                else {
                    records.removeSubrange(min(start, records.count)...)
                    break
                }
                chunks.append(chunk)
                offset += chunk.size
            }
            return (chunks, offset)
        }
    }

    /// The chunk at the start of `bytes`, its records appended to `records`.
    private static func decodeChunk(_ bytes: UnsafeRawBufferPointer, into records: inout [SegmentStore.ScannedRecord]) throws(EntryFile.Damage) -> Chunk {
        guard bytes.count >= headerSize else { throw .truncated(length: bytes.count) }
        guard bytes.prefix(4).elementsEqual(magic) else { throw .badMagic }
        func field<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        let first = Int(field(Offset.first, UInt32.self)), end = Int(field(Offset.end, UInt32.self))
        let storedLength = Int(field(Offset.storedLength, UInt32.self)), rawLength = Int(field(Offset.rawLength, UInt32.self))
        let flags = field(Offset.flags, UInt8.self)
        let length = headerSize + storedLength
        guard length <= bytes.count else { throw .truncated(length: bytes.count) }
        guard flags & ~compressedFlag == 0, field(Offset.flags + 1, UInt16.self) == 0, field(Offset.flags + 3, UInt8.self) == 0 else {
            throw .unknownFlags(UInt16(flags))
        }
        guard field(Offset.checksum, UInt64.self) == XXHash64.hash(UnsafeRawBufferPointer(rebasing: bytes[Offset.checksummed ..< length])) else {
            throw .checksumMismatch
        }
        let isCompressed = flags & compressedFlag != 0
        guard first < end,
              isCompressed
              ? storedLength < rawLength && rawLength <= min(storedLength * EntryFile.largestCompressionRatio, maximumRawLength)
              : storedLength == rawLength
        else { throw .lengthMismatch(expected: rawLength, actual: storedLength) }
        let stored = UnsafeRawBufferPointer(rebasing: bytes[headerSize ..< length])
        let start = records.count
        if isCompressed {
            let body = UnsafeMutableRawBufferPointer.allocate(byteCount: rawLength, alignment: 8)
            defer { body.deallocate() }
            guard LZ4.decompress(stored, into: body) else { throw .undecompressible }
            try parse(UnsafeRawBufferPointer(body), covering: first ..< end, into: &records)
        } else {
            try parse(stored, covering: first ..< end, into: &records)
        }
        return Chunk(
            covering: first ..< end, lastBlock: (records.last!.offset, field(Offset.lastBlockChecksum, UInt64.self)),
            records: start ..< records.count, size: length
        )
    }

    private static func parse(
        _ body: UnsafeRawBufferPointer, covering: Range<Int>, into records: inout [SegmentStore.ScannedRecord]
    ) throws(EntryFile.Damage) {
        var reader = BinaryReader(body)
        do {
            let baseExpiry = try reader.read(Int64.self)
            let baseSequence = try reader.read(UInt64.self)
            var spaces: [(name: String, kind: UInt8)] = []
            for _ in 0 ..< min(try reader.readVarint(), UInt64(body.count)) {
                let kind = try reader.read(UInt8.self)
                guard EntryFile.kinds.contains(kind) else { throw EntryFile.Damage.unknownKind(kind) }
                guard let name = String(validUTF8: try reader.readBytes(Int(clamping: try reader.readVarint()))) else { throw EntryFile.Damage.invalidName }
                spaces.append((name, kind))
            }
            let start = records.count
            var offset = covering.lowerBound
            var index = -1
            while reader.remaining > 0 {
                let flags = try reader.read(UInt8.self)
                guard flags & ~tombstoneFlag == 0 else { throw EntryFile.Damage.unknownFlags(UInt16(flags)) }
                let spaceIndex = try reader.readVarint()
                guard spaceIndex < spaces.count else { throw EntryFile.Damage.invalidName }
                let keyBytes = try reader.readBytes(Int(clamping: try reader.readVarint()))
                guard !keyBytes.isEmpty, let key = String(validUTF8: keyBytes) else { throw EntryFile.Damage.invalidName }
                let expiry = baseExpiry &+ Int64(bitPattern: try reader.readVarint())
                let sequence = baseSequence &+ (try reader.readVarint())
                let step = Int(clamping: try reader.readVarint())
                let share = Int(clamping: try reader.readVarint())
                let rawLength = Int(clamping: try reader.readVarint())
                // The index is not stored: every record of each block is listed, in order.
                index = step == 0 && index >= 0 ? index + 1 : 0
                offset += step
                let isTombstone = flags & tombstoneFlag != 0
                guard covering.contains(offset), index <= SegmentBlock.maximumRecords, share > 0, !isTombstone || rawLength == 0 else {
                    throw EntryFile.Damage.lengthMismatch(expected: covering.upperBound, actual: offset)
                }
                let space = spaces[Int(spaceIndex)]
                let header = EntryFile.Header(
                    flags: isTombstone ? .tombstone : [], expiry: expiry, sequence: sequence,
                    rawLength: rawLength, storedLength: rawLength, key: key, space: space.name, kind: space.kind
                )
                records.append(SegmentStore.ScannedRecord(header: header, offset: offset, index: index, length: share))
            }
            guard records.count > start else { throw EntryFile.Damage.truncated(length: body.count) }
        } catch let damage as EntryFile.Damage {
            throw damage
        } catch {
            throw .truncated(length: body.count)
        }
    }
}
