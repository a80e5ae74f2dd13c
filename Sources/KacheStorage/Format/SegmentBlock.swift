import Foundation

/// Small records gathered into a block and LZ4-compressed together: what a
/// segment file of format version 3 holds, back to back. Specified in docs/FORMAT.md.
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
/// The raw body: base expiry (i64), base sequence (u64), the key spaces its
/// records name (a count, then each one's kind byte and its name, a varint
/// length and UTF-8), then the records. A record: flags (bit 1: tombstone),
/// its key space's index in that list, key (varint length, UTF-8), expiry
/// and sequence above their bases, value (varint length, bytes). Varints are
/// LEB128. A record of a 200-byte value costs its key and about a dozen
/// bytes before compression, where a record of its own costs 48 and its
/// key space's name.
///
/// Why blocks: LZ4 finds the repetition between neighbouring values (JSON
/// responses share their field names) only when they are compressed
/// together; W8's 200-byte values shrink to 0.50 of their size alone and to
/// 0.19 in blocks of 4 KiB (docs/PERFORMANCE.md, `kache-bench blocks`).
/// One checksum covers a block: a flipped bit costs that block's records,
/// never the rest of the segment.
package enum SegmentBlock {
    package static let magic: [UInt8] = Array("KBLK".utf8)
    package static let headerSize = 24
    /// A location names a record by its index in the block, in 8 bits.
    package static let maximumRecords = 255
    /// The most raw body bytes a reader accepts: a hostile header can't make it allocate more.
    package static let maximumRawLength = 1 << 20
    /// The raw bytes a writer gathers before it seals a block: the space
    /// saved levels off past it while a cold read, which decompresses the
    /// whole block, keeps getting slower (docs/PERFORMANCE.md).
    package static let targetRawLength = 4 << 10

    enum Offset {
        static let checksum = 4
        static let checksummed = 12
        static let storedLength = 12
        static let rawLength = 16
        static let flags = 20
        static let count = 21
    }

    private static let compressedFlag: UInt8 = 1 << 0
    private static let tombstoneFlag: UInt8 = 1 << 1

    /// One record to gather.
    package struct Record: Sendable, Equatable {
        package var key: String
        /// The key space's name (empty for the top level) and kind.
        package var space: String
        package var kind: UInt8
        package var expiry: Timestamp
        package var sequence: UInt64
        package var isTombstone: Bool
        /// The value as the entry holds it (empty for a tombstone).
        package var value: Data

        package init(key: String, space: String, kind: UInt8, expiry: Timestamp, sequence: UInt64, isTombstone: Bool = false, value: Data) {
            self.key = key
            self.space = space
            self.kind = kind
            self.expiry = expiry
            self.sequence = sequence
            self.isTombstone = isTombstone
            self.value = value
        }

        /// The most raw bytes the record takes in a block: its key, value and
        /// largest fields, with its key space's entry in the list.
        package var largestRawLength: Int {
            key.utf8.count + value.count + space.utf8.count + 40
        }
    }

    /// Gathers records and seals them into a block.
    package struct Builder {
        package private(set) var records: [Record] = []
        /// Raw body bytes so far, the bases and key-space list left out.
        package private(set) var rawLength = 0

        package init() {}

        package var isEmpty: Bool { records.isEmpty }
        package var isFull: Bool { records.count == SegmentBlock.maximumRecords }

        /// Whether `record` still fits a block aimed at `targetLength` raw bytes
        /// (an empty block takes any record).
        package func fits(_ record: Record, targetLength: Int = SegmentBlock.targetRawLength) -> Bool {
            records.isEmpty || !isFull && rawLength + record.largestRawLength <= targetLength
        }

        package mutating func append(_ record: Record) {
            precondition(!isFull, "a block holds at most \(SegmentBlock.maximumRecords) records")
            records.append(record)
            rawLength += record.largestRawLength
        }

        /// The block's bytes, and each record's share of them (in proportion
        /// to its raw bytes; the shares add up to the block's length exactly,
        /// so that the segment's accounting adds up to its file's length).
        package func seal() -> (bytes: Data, charges: [Int]) {
            precondition(!records.isEmpty, "an empty block")
            var body = [UInt8]()
            body.reserveCapacity(rawLength + 32)
            let baseExpiry = records.lazy.map(\.expiry).min()!
            let baseSequence = records.lazy.map(\.sequence).min()!
            body.appendInteger(baseExpiry)
            body.appendInteger(baseSequence)
            var spaces: [String: Int] = [:]
            var spaceList: [(name: String, kind: UInt8)] = []
            for record in records where spaces[record.space] == nil {
                spaces[record.space] = spaceList.count
                spaceList.append((record.space, record.kind))
            }
            body.appendVarint(UInt64(spaceList.count))
            for (name, kind) in spaceList {
                body.append(kind)
                body.appendVarint(UInt64(name.utf8.count))
                body.append(contentsOf: name.utf8)
            }
            var recordEnds: [Int] = []
            recordEnds.reserveCapacity(records.count)
            for record in records {
                body.append(record.isTombstone ? SegmentBlock.tombstoneFlag : 0)
                body.appendVarint(UInt64(spaces[record.space]!))
                body.appendVarint(UInt64(record.key.utf8.count))
                body.append(contentsOf: record.key.utf8)
                body.appendVarint(UInt64(bitPattern: record.expiry &- baseExpiry))
                body.appendVarint(record.sequence &- baseSequence)
                body.appendVarint(UInt64(record.value.count))
                body.append(contentsOf: record.value)
                recordEnds.append(body.count)
            }
            let block = SegmentBlock.seal(body, count: records.count)
            return (block, SegmentBlock.shares(of: block.count, byEnds: recordEnds))
        }
    }

    /// Compresses `body` behind a header, or stores it raw when LZ4 can't shrink it.
    private static func seal(_ body: [UInt8], count: Int) -> Data {
        var block = Data(count: headerSize + body.count)
        var storedLength = body.count
        var flags: UInt8 = 0
        block.withUnsafeMutableBytes { out in
            let destination = UnsafeMutableRawBufferPointer(rebasing: out[headerSize...])
            body.withUnsafeBytes { source in
                // One byte short of raw: LZ4 succeeds only when it saves space. A
                // block keeps a byte per record (`shares`); raw, each takes 7 at least.
                if let length = LZ4.compress(source, into: UnsafeMutableRawBufferPointer(rebasing: destination.dropLast())),
                   headerSize + length >= count
                {
                    storedLength = length
                    flags = compressedFlag
                } else {
                    destination.copyMemory(from: source)
                }
            }
            out.copyBytes(from: magic)
            out.storeBytes(of: UInt32(storedLength).littleEndian, toByteOffset: Offset.storedLength, as: UInt32.self)
            out.storeBytes(of: UInt32(body.count).littleEndian, toByteOffset: Offset.rawLength, as: UInt32.self)
            out.storeBytes(of: flags, toByteOffset: Offset.flags, as: UInt8.self)
            out.storeBytes(of: UInt8(count), toByteOffset: Offset.count, as: UInt8.self)
        }
        block.count = headerSize + storedLength
        block.withUnsafeMutableBytes { out in
            let checksum = XXHash64.hash(UnsafeRawBufferPointer(rebasing: out[Offset.checksummed...]))
            out.storeBytes(of: checksum.littleEndian, toByteOffset: Offset.checksum, as: UInt64.self)
        }
        return block
    }

    /// `total` split among the records whose raw bytes end at `ends` (the
    /// first starts at 0): a byte each, the rest in proportion to their raw
    /// bytes, rounded so that the parts add up to `total`. Never 0: a length
    /// of 0 means "not on disk" to the index and the manifest. A sealed block
    /// is at least a byte per record long (`seal`).
    package static func shares(of total: Int, byEnds ends: [Int]) -> [Int] {
        let whole = ends.last!
        let spread = total - ends.count
        precondition(spread >= 0, "a block shorter than its record count")
        var shares: [Int] = []
        shares.reserveCapacity(ends.count)
        var given = 0
        for end in ends {
            let upTo = end == whole ? spread : spread * end / whole
            shares.append(1 + upTo - given)
            given = upTo
        }
        return shares
    }

    // MARK: - Reading

    /// The length the header at the start of `bytes` gives its block, or nil
    /// when it does not start with the magic. Nothing else is checked.
    package static func blockLength(at bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= headerSize, bytes.prefix(4).elementsEqual(magic) else { return nil }
        return headerSize + Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: Offset.storedLength, as: UInt32.self)))
    }

    /// Whether `bytes` start with a block's magic (a record of version 2 starts with `EntryFile.magic`).
    package static func startsBlock(_ bytes: UnsafeRawBufferPointer) -> Bool {
        bytes.count >= 4 && bytes.prefix(4).elementsEqual(magic)
    }

    /// A record as read back: its header as a file of its own would give it,
    /// and where its value is in the decompressed body.
    package struct Decoded: Sendable {
        package var header: EntryFile.Header
        package var value: Range<Int>
    }

    /// A block's records, decompressed and checked.
    package struct Contents: Sendable {
        package var body: Data
        package var records: [Decoded]

        package func value(of index: Int) -> Data { body.subdata(in: records[index].value) }
    }

    /// Checks the whole of `block` (magic, checksum, lengths, every record)
    /// and decodes it. Never traps on hostile input.
    /// - Complexity: O(n) in the block's raw length.
    package static func decode(_ block: UnsafeRawBufferPointer) throws(EntryFile.Damage) -> Contents {
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
        return Contents(body: body, records: records)
    }

    /// Record `index` of `block` and its value, for a read: the block's
    /// magic, checksum and lengths are checked and its body decompressed,
    /// but only that record is decoded (those before it are stepped over,
    /// their keys never made into strings). Never traps on hostile input.
    package static func record(_ index: Int, in block: UnsafeRawBufferPointer) throws(EntryFile.Damage) -> (header: EntryFile.Header, payload: Data) {
        let (stored, rawLength, isCompressed, count) = try checkedBody(block)
        guard index < count else { throw .lengthMismatch(expected: index + 1, actual: count) }
        let decode = { (body: UnsafeRawBufferPointer) throws(EntryFile.Damage) -> (header: EntryFile.Header, payload: Data) in
            let (header, value) = try parseRecord(index, in: body, count: count)
            return (header, Data(body[value]))
        }
        guard isCompressed else { return try decode(stored) }
        // The body lives only until the value is copied out: no zeroed buffer, no `Data` around it.
        let body = UnsafeMutableRawBufferPointer.allocate(byteCount: rawLength, alignment: 8)
        defer { body.deallocate() }
        guard LZ4.decompress(stored, into: body) else { throw .undecompressible }
        return try decode(UnsafeRawBufferPointer(body))
    }

    /// The stored body of `block` once its header, lengths and checksum
    /// check out, with what the header says about it.
    private static func checkedBody(
        _ block: UnsafeRawBufferPointer
    ) throws(EntryFile.Damage) -> (stored: UnsafeRawBufferPointer, rawLength: Int, isCompressed: Bool, count: Int) {
        guard block.count >= headerSize else { throw .truncated(length: block.count) }
        guard block.prefix(4).elementsEqual(magic) else { throw .badMagic }
        func field<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            T(littleEndian: block.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        let storedLength = Int(field(Offset.storedLength, UInt32.self))
        let rawLength = Int(field(Offset.rawLength, UInt32.self))
        let flags = field(Offset.flags, UInt8.self)
        let count = Int(field(Offset.count, UInt8.self))
        guard headerSize + storedLength == block.count else { throw .lengthMismatch(expected: headerSize + storedLength, actual: block.count) }
        guard flags & ~compressedFlag == 0, field(22, UInt16.self) == 0 else { throw .unknownFlags(UInt16(flags)) }
        let checksum = field(Offset.checksum, UInt64.self)
        guard checksum == XXHash64.hash(UnsafeRawBufferPointer(rebasing: block[Offset.checksummed...])) else { throw .checksumMismatch }
        let isCompressed = flags & compressedFlag != 0
        let lengthsAgree = isCompressed
            ? storedLength < rawLength && rawLength <= min(storedLength * EntryFile.largestCompressionRatio, maximumRawLength)
            : storedLength == rawLength
        guard lengthsAgree, count > 0 else { throw .lengthMismatch(expected: rawLength, actual: storedLength) }
        return (UnsafeRawBufferPointer(rebasing: block[headerSize...]), rawLength, isCompressed, count)
    }

    /// `decode` of a block held in a `Data`.
    package static func decode(_ block: Data) throws(EntryFile.Damage) -> Contents {
        try block.withUnsafeBytes { raw in Result { () throws(EntryFile.Damage) in try decode(raw) } }.get()
    }

    /// The records of a raw body, which must hold exactly `count` of them.
    private static func parse(_ body: UnsafeRawBufferPointer, count: Int) throws(EntryFile.Damage) -> [Decoded] {
        var reader = try BodyReader(body, count: count)
        let names = try reader.spaces.map { space throws(EntryFile.Damage) in try BodyReader.name(space.name) }
        var records: [Decoded] = []
        records.reserveCapacity(count)
        for _ in 0 ..< count {
            let (header, value) = try reader.readRecord { names[$0] }
            records.append(Decoded(header: header, value: value))
        }
        guard reader.remaining == 0 else { throw .lengthMismatch(expected: body.count - reader.remaining, actual: body.count) }
        return records
    }

    /// Record `index` of a raw body, stepping over those before it, and the
    /// range of its value in `body`.
    private static func parseRecord(_ index: Int, in body: UnsafeRawBufferPointer, count: Int) throws(EntryFile.Damage) -> (EntryFile.Header, Range<Int>) {
        var reader = try BodyReader(body, count: count)
        for _ in 0 ..< index { try reader.skipRecord() }
        let spaces = reader.spaces
        return try reader.readRecord { index throws(EntryFile.Damage) in try BodyReader.name(spaces[index].name) }
    }
}

/// Reads a block's raw body: its bases and key-space list first, then one
/// record at a time. Every read is bounds-checked; bytes that don't parse
/// throw `EntryFile.Damage`.
private struct BodyReader {
    private var reader: BinaryReader
    private let baseExpiry: Int64
    private let baseSequence: UInt64
    /// Each key space's name (its bytes: only those a caller asks for become strings) and kind.
    let spaces: [(name: UnsafeRawBufferPointer, kind: UInt8)]

    private static let tombstoneFlag: UInt8 = 1 << 1

    /// Reads the bases and the key-space list of a body of `count` records.
    init(_ body: UnsafeRawBufferPointer, count: Int) throws(EntryFile.Damage) {
        reader = BinaryReader(body)
        do {
            baseExpiry = try reader.read(Int64.self)
            baseSequence = try reader.read(UInt64.self)
            let spaceCount = try reader.readVarint()
            // A record names one key space: more than records would be damage.
            guard spaceCount <= count else { throw EntryFile.Damage.lengthMismatch(expected: count, actual: Int(clamping: spaceCount)) }
            var spaces: [(name: UnsafeRawBufferPointer, kind: UInt8)] = []
            for _ in 0 ..< spaceCount {
                let kind = try reader.read(UInt8.self)
                guard EntryFile.kinds.contains(kind) else { throw EntryFile.Damage.unknownKind(kind) }
                spaces.append((try reader.readBytes(Int(clamping: try reader.readVarint())), kind))
            }
            self.spaces = spaces
        } catch {
            throw Self.damage(error, in: body)
        }
    }

    var remaining: Int { reader.remaining }

    static func name(_ bytes: UnsafeRawBufferPointer) throws(EntryFile.Damage) -> String {
        guard let name = String(validUTF8: bytes) else { throw .invalidName }
        return name
    }

    /// Steps over one record without decoding its key.
    mutating func skipRecord() throws(EntryFile.Damage) {
        do {
            _ = try reader.read(UInt8.self)
            _ = try reader.readVarint()
            _ = try reader.readBytes(Int(clamping: try reader.readVarint()))
            _ = try reader.readVarint()
            _ = try reader.readVarint()
            _ = try reader.readBytes(Int(clamping: try reader.readVarint()))
        } catch {
            throw .truncated(length: reader.offset)
        }
    }

    /// Reads one record; `spaceName` gives the name of a key space by its index.
    mutating func readRecord(spaceName: (Int) throws(EntryFile.Damage) -> String) throws(EntryFile.Damage) -> (EntryFile.Header, Range<Int>) {
        do {
            let flags = try reader.read(UInt8.self)
            guard flags & ~Self.tombstoneFlag == 0 else { throw EntryFile.Damage.unknownFlags(UInt16(flags)) }
            let spaceIndex = try reader.readVarint()
            guard spaceIndex < spaces.count else { throw EntryFile.Damage.invalidName }
            let keyBytes = try reader.readBytes(Int(clamping: try reader.readVarint()))
            guard !keyBytes.isEmpty, let key = String(validUTF8: keyBytes) else { throw EntryFile.Damage.invalidName }
            let space = try spaceName(Int(spaceIndex))
            let expiry = baseExpiry &+ Int64(bitPattern: try reader.readVarint())
            let sequence = baseSequence &+ (try reader.readVarint())
            let valueLength = Int(clamping: try reader.readVarint())
            let valueStart = reader.offset
            _ = try reader.readBytes(valueLength)
            let isTombstone = flags & Self.tombstoneFlag != 0
            guard !isTombstone || valueLength == 0 else { throw EntryFile.Damage.lengthMismatch(expected: 0, actual: valueLength) }
            let header = EntryFile.Header(
                flags: isTombstone ? .tombstone : [], expiry: expiry, sequence: sequence,
                rawLength: valueLength, storedLength: valueLength, key: key, space: space, kind: spaces[Int(spaceIndex)].kind
            )
            return (header, valueStart ..< valueStart + valueLength)
        } catch {
            throw Self.damage(error, at: reader.offset)
        }
    }

    /// `error` as damage: itself when it is, a truncation otherwise (`BinaryReader` ran out).
    private static func damage(_ error: any Error, at offset: Int) -> EntryFile.Damage {
        error as? EntryFile.Damage ?? .truncated(length: offset)
    }

    private static func damage(_ error: any Error, in body: UnsafeRawBufferPointer) -> EntryFile.Damage {
        damage(error, at: body.count)
    }
}
