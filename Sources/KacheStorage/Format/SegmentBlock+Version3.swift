import Foundation

/// Blocks as format versions 3 and 4 wrote them, read so that their
/// directories open with nothing lost; nothing writes them any more.
///
/// ```
/// offset size field
///  0      4   magic "KBLK"
///  4      8   checksum: XXH64 (seed 0) of bytes 12 ..< end of block
/// 12      4   stored body length
/// 16      4   raw body length
/// 20      1   flags (bit 0: the body is an LZ4 block)
/// 21      1   record count (1 … 255)
/// 22      2   reserved, zero
/// 24      …   body
/// ```
/// The raw body: base expiry (i64), base sequence (u64), the key-space list
/// (as in the current layout), then per record: flags, key-space index, key,
/// expiry and sequence above their bases in nanoseconds and units, and the
/// value (varint length, bytes), each value beside its key.
extension SegmentBlock {
    enum Version3 {
        static let magic: [UInt8] = Array("KBLK".utf8)
        static let headerSize = 24

        private static let compressedFlag: UInt8 = 1 << 0

        static func blockLength(at bytes: UnsafeRawBufferPointer) -> Int {
            headerSize + Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: 12, as: UInt32.self)))
        }

        static func decode(_ block: UnsafeRawBufferPointer) throws(EntryFile.Damage) -> Contents {
            let (stored, rawLength, isCompressed, count) = try checkedBody(block)
            var body = Data(count: rawLength)
            if isCompressed {
                guard body.withUnsafeMutableBytes({ LZ4.decompress(stored, into: $0) }) else { throw .undecompressible }
            } else {
                body.withUnsafeMutableBytes { $0.copyMemory(from: stored) }
            }
            let records = try body.withUnsafeBytes { raw in
                Result { () throws(EntryFile.Damage) in try parse(raw, count: count) }
            }.get()
            return Contents(body: body, records: records, shares: SegmentBlock.shares(of: block.count, byEnds: records.map(\.value.upperBound)))
        }

        static func record(_ index: Int, in block: UnsafeRawBufferPointer) throws(EntryFile.Damage) -> (header: EntryFile.Header, payload: Data) {
            let (stored, rawLength, isCompressed, count) = try checkedBody(block)
            guard index < count else { throw .lengthMismatch(expected: index + 1, actual: count) }
            let decode = { (body: UnsafeRawBufferPointer) throws(EntryFile.Damage) -> (header: EntryFile.Header, payload: Data) in
                var reader = try Reader(body, count: count)
                for _ in 0 ..< index { try reader.skipRecord() }
                let (header, value) = try reader.readRecord()
                return (header, Data(body[value]))
            }
            guard isCompressed else { return try decode(stored) }
            let body = UnsafeMutableRawBufferPointer.allocate(byteCount: rawLength, alignment: 8)
            defer { body.deallocate() }
            guard LZ4.decompress(stored, into: body) else { throw .undecompressible }
            return try decode(UnsafeRawBufferPointer(body))
        }

        private static func checkedBody(
            _ block: UnsafeRawBufferPointer
        ) throws(EntryFile.Damage) -> (stored: UnsafeRawBufferPointer, rawLength: Int, isCompressed: Bool, count: Int) {
            guard block.count >= headerSize else { throw .truncated(length: block.count) }
            guard SegmentBlock.starts(block, with: magic) else { throw .badMagic }
            func field<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
                T(littleEndian: block.loadUnaligned(fromByteOffset: offset, as: T.self))
            }
            let storedLength = Int(field(12, UInt32.self))
            let rawLength = Int(field(16, UInt32.self))
            let flags = field(20, UInt8.self)
            let count = Int(field(21, UInt8.self))
            guard headerSize + storedLength == block.count else { throw .lengthMismatch(expected: headerSize + storedLength, actual: block.count) }
            guard flags & ~compressedFlag == 0, field(22, UInt16.self) == 0 else { throw .unknownFlags(UInt16(flags)) }
            guard field(4, UInt64.self) == XXHash64.hash(UnsafeRawBufferPointer(rebasing: block[12...])) else { throw .checksumMismatch }
            let isCompressed = flags & compressedFlag != 0
            guard SegmentBlock.lengthsAgree(stored: storedLength, raw: rawLength, isCompressed: isCompressed), count > 0 else {
                throw .lengthMismatch(expected: rawLength, actual: storedLength)
            }
            return (UnsafeRawBufferPointer(rebasing: block[headerSize...]), rawLength, isCompressed, count)
        }

        private static func parse(_ body: UnsafeRawBufferPointer, count: Int) throws(EntryFile.Damage) -> [Decoded] {
            var reader = try Reader(body, count: count)
            var records: [Decoded] = []
            records.reserveCapacity(count)
            for _ in 0 ..< count {
                let (header, value) = try reader.readRecord()
                records.append(Decoded(header: header, value: value))
            }
            guard reader.remaining == 0 else { throw .lengthMismatch(expected: body.count - reader.remaining, actual: body.count) }
            return records
        }
    }
}

/// Reads a version-3 body: its bases and key-space list, then one record,
/// value included, at a time.
private struct Reader {
    private var reader: BinaryReader
    private let prelude: SegmentBlock.Prelude

    init(_ body: UnsafeRawBufferPointer, count: Int) throws(EntryFile.Damage) {
        reader = BinaryReader(body)
        prelude = try SegmentBlock.Prelude(&reader, recordCount: count)
    }

    var remaining: Int { reader.remaining }

    mutating func skipRecord() throws(EntryFile.Damage) {
        do {
            try SegmentBlock.skipKey(&reader)
            _ = try reader.readVarint()
            _ = try reader.readVarint()
            _ = try reader.readBytes(Int(clamping: try reader.readVarint()))
        } catch {
            throw .truncated(length: reader.offset)
        }
    }

    mutating func readRecord() throws(EntryFile.Damage) -> (EntryFile.Header, Range<Int>) {
        do {
            let (flags, space, key) = try SegmentBlock.readKey(&reader, spaces: prelude.spaces)
            let expiry = prelude.baseExpiry &+ Int64(bitPattern: try reader.readVarint())
            let sequence = prelude.baseSequence &+ (try reader.readVarint())
            let valueLength = Int(clamping: try reader.readVarint())
            let valueStart = reader.offset
            _ = try reader.readBytes(valueLength)
            let header = try SegmentBlock.header(flags: flags, space: space, key: key, expiry: expiry, sequence: sequence, valueLength: valueLength)
            return (header, valueStart ..< valueStart + valueLength)
        } catch {
            throw error as? EntryFile.Damage ?? .truncated(length: reader.offset)
        }
    }
}
