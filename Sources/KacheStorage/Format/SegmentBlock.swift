import Foundation

/// Small records gathered into a block: what a segment file holds, back to
/// back. Specified in docs/FORMAT.md.
///
/// ```
/// offset size field
///  0      4   magic "KBL4" ("KBL3" in format version 6, "KBL2" in version 5: keys in rows)
///  4      4   keys checksum: XXH64 (seed 0) of bytes 12 ..< end of the keys section, its low 32 bits
///  8      4   values checksum: XXH64 (seed 0) of the values section as stored, its low 32 bits
///             (versions 5 and 6: bytes 4 ..< 12 are XXH64 (seed 0) of bytes 12 ..< end of block)
/// 12      4   keys section: stored length
/// 16      4   keys section: raw length
/// 20      4   values section: stored length
/// 24      4   values section: raw length
/// 28      1   flags (bit 0: the keys section is an LZ4 block; bit 1: the values section is)
/// 29      1   record count (1 … 255)
/// 30      2   reserved, zero
/// 32      …   the keys section, then the values section, as stored
/// ```
/// The raw keys section: base expiry (i64, ms since the epoch), base sequence (u64), the
/// key spaces its records name (a count, then each one's kind byte and its
/// name, a varint length and UTF-8), then the records' fields a column each
/// (`KeyColumns`: flags, key space, key, expiry, sequence, value length). In
/// format version 5 the same fields came a record after another
/// (`KeysReader`). The raw values section: the values back to back. Varints
/// are LEB128.
///
/// Why two sections: opening reads every record's key, never a value, so
/// the keys section is decompressed alone (and no second copy of the keys
/// is kept beside the segment). Why blocks: LZ4 finds the repetition
/// between neighbouring values (JSON responses share their field names)
/// only when they are compressed together; W8's records shrink to 0.50 of
/// their size alone and to 0.18 in blocks of 8 KiB (CHANGELOG.md, 0.3.0;
/// `kache-bench blocks`). Two checksums cover a block, one the header's
/// fields and the keys section, the other the values section: a flipped bit
/// costs that block's records, never the rest of the segment, and a clean
/// open checks what it reads and never reads a value (`Verification.keys`).
/// 32 bits each, as RocksDB's CRC32C of a block: a 64-bit checksum of each
/// would cost 8 bytes a block more, 0.8 % of W1's bytes.
package enum SegmentBlock {
    package static let magic: [UInt8] = Array("KBL4".utf8)
    /// Blocks of format version 6: keys in columns, one checksum of the
    /// whole block. Read, no longer written.
    package static let version6Magic: [UInt8] = Array("KBL3".utf8)
    /// Blocks of format version 5: as version 6's, but the keys section a
    /// record after another (`KeysReader`). Read, no longer written.
    package static let rowsMagic: [UInt8] = Array("KBL2".utf8)
    package static let headerSize = 32
    /// A location names a record by its index in the block, in 8 bits.
    package static let maximumRecords = 255
    /// The most raw bytes a reader accepts in a section: a hostile header can't make it allocate more.
    package static let maximumRawLength = 1 << 20
    /// The raw bytes a writer gathers before it seals a block: 16 KiB saved
    /// W8 another 4 % of its bytes, but made W5's cold reads, which
    /// decompress the values up to their own, a fifth slower (CHANGELOG.md, 0.3.0).
    package static let targetRawLength = 8 << 10
    /// Expiries are kept to the millisecond, rounded down (never later than
    /// asked): nanoseconds would cost three more bytes a record that no
    /// compression finds. Rounded as absolute instants, so that a copy of a
    /// record (compaction) keeps the very expiry of the original.
    static let nanosecondsPerExpiryUnit: Int64 = 1_000_000

    /// `expiry` in whole milliseconds since the epoch, rounded down.
    static func expiryUnits(_ expiry: Timestamp) -> Int64 {
        let (quotient, remainder) = expiry.quotientAndRemainder(dividingBy: nanosecondsPerExpiryUnit)
        return remainder < 0 ? quotient - 1 : quotient
    }

    enum Offset {
        /// Versions 5 and 6: the whole block's checksum.
        static let checksum = 4
        static let keysChecksum = 4
        static let valuesChecksum = 8
        static let checksummed = 12
        static let keysStored = 12
        static let keysRaw = 16
        static let valuesStored = 20
        static let valuesRaw = 24
        static let flags = 28
        static let count = 29
        static let reserved = 30
    }

    /// How much of a block a reader checks against its checksums.
    package enum Verification: Sendable {
        /// Every byte, by both checksums (by the one of a block of version 5
        /// or 6): a read, a recovery after a crash, compaction, `kache
        /// inspect` and `kache verify`.
        case block
        /// The header's fields and the keys section, by their checksum (a
        /// block of version 5 or 6, which has one checksum, is checked
        /// whole): an open from a current manifest, which needs every key
        /// and no value, and whose blocks were all flushed before that
        /// manifest was written. A value damaged since is found when it is read.
        case keys
    }

    /// A checksum of this version: XXH64 (seed 0) of `bytes`, its low 32 bits.
    static func checksum32(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        UInt32(truncatingIfNeeded: XXHash64.hash(bytes))
    }

    private static let keysCompressed: UInt8 = 1 << 0
    private static let valuesCompressed: UInt8 = 1 << 1
    static let tombstoneFlag: UInt8 = 1 << 1

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
            Self.largestRawLength(keyBytes: key.utf8.count, valueBytes: value.count, spaceBytes: space.utf8.count)
        }

        /// `largestRawLength` of a record of these sizes, before it is made.
        package static func largestRawLength(keyBytes: Int, valueBytes: Int, spaceBytes: Int) -> Int {
            keyBytes + valueBytes + spaceBytes + 40
        }

        /// What the record weighs in a block (`KeyColumns.weight`): what
        /// fills a block to its target, and its share of the block's length.
        package var weight: Int {
            KeyColumns.weight(keyLength: key.utf8.count, valueLength: value.count)
        }
    }

    /// Gathers records and seals them into a block.
    package struct Builder {
        package private(set) var records: [Record] = []
        /// The records' weight so far (`Record.weight`: about their raw
        /// bytes, the bases and key-space list left out).
        package private(set) var rawLength = 0

        package init() {}

        package var isEmpty: Bool { records.isEmpty }
        package var isFull: Bool { records.count == SegmentBlock.maximumRecords }

        /// Whether `record` still fits a block aimed at `targetLength` raw bytes
        /// (an empty block takes any record).
        package func fits(_ record: Record, targetLength: Int = SegmentBlock.targetRawLength) -> Bool {
            Self.fits(weight: record.weight, after: rawLength, count: records.count, targetLength: targetLength)
        }

        /// The one rule for filling a block, for those that gather records
        /// before a builder sees them: a record of `weight` fits after
        /// `count` records weighing `length` in all.
        package static func fits(weight: Int, after length: Int, count: Int, targetLength: Int = SegmentBlock.targetRawLength) -> Bool {
            count == 0 || count < SegmentBlock.maximumRecords && length + weight <= targetLength
        }

        package mutating func append(_ record: Record) {
            precondition(!isFull, "a block holds at most \(SegmentBlock.maximumRecords) records")
            records.append(record)
            rawLength += record.weight
        }

        /// The block's bytes, and each record's share of them (in proportion
        /// to its raw bytes; the shares add up to the block's length exactly,
        /// so that the segment's accounting adds up to its file's length).
        package func seal(compression: Compression = .fast) -> (bytes: Data, charges: [Int]) {
            Self.seal(records[...], compression: compression)
        }

        /// `seal` of a block of `records`, a run of a larger array that
        /// `fits` chose, where they lie (copied into a builder, each record
        /// cost a retain and a release of its key, key space and value).
        package static func seal(_ records: ArraySlice<Record>, compression: Compression = .fast) -> (bytes: Data, charges: [Int]) {
            precondition(!records.isEmpty, "an empty block")
            var keys = [UInt8]()
            keys.reserveCapacity(records.count * 24 + 32)
            // Records are read by index, field by field: a `for record in
            // records` copied each whole one (`KeyColumns.append` says more).
            let baseExpiry = SegmentBlock.expiryUnits(records.indices.lazy.map { records[$0].expiry }.min()!)
            let baseSequence = records[records.startIndex].sequence
            keys.appendInteger(baseExpiry)
            keys.appendInteger(baseSequence)
            // Each record's key space's index in the list; neighbours mostly share one, so the last is tried first.
            var spaceList: [(name: String, kind: UInt8)] = []
            var listed: [String: Int] = [:]
            var spaces: [Int] = []
            spaces.reserveCapacity(records.count)
            for index in records.indices {
                let space = records[index].space
                if let last = spaces.last, spaceList[last].name == space {
                    spaces.append(last)
                } else if let known = listed[space] {
                    spaces.append(known)
                } else {
                    listed[space] = spaceList.count
                    spaces.append(spaceList.count)
                    spaceList.append((space, records[index].kind))
                }
            }
            keys.appendVarint(UInt64(spaceList.count))
            for (name, kind) in spaceList {
                keys.append(kind)
                keys.appendVarint(UInt64(name.utf8.count))
                keys.append(contentsOf: name.utf8)
            }
            KeyColumns.append(records, baseExpiry: baseExpiry, baseSequence: baseSequence, spaces: spaces, to: &keys)
            var values = [UInt8]()
            values.reserveCapacity(records.indices.reduce(0) { $0 + records[$1].value.count })
            // Through the buffer: appending a `Data` as a sequence went byte by byte (a third of sealing).
            for index in records.indices { records[index].value.withUnsafeBytes { values.append(contentsOf: $0) } }
            let block = SegmentBlock.seal(keys: keys, values: values, count: records.count, compression: compression)
            return (block, SegmentBlock.shares(of: block.count, byWeights: records.indices.lazy.map { records[$0].weight }))
        }
    }

    static func zigzag(_ difference: UInt64) -> UInt64 {
        let signed = Int64(bitPattern: difference)
        return UInt64(bitPattern: (signed << 1) ^ (signed >> 63))
    }

    static func unzigzag(_ value: UInt64) -> UInt64 {
        (value >> 1) ^ (0 &- (value & 1))
    }

    /// The two sections behind a header, each compressed where LZ4 shrinks
    /// it. `magic` may name a block of an earlier version, for tests of
    /// what an earlier Kache wrote.
    package static func seal(keys: [UInt8], values: [UInt8], count: Int, compression: Compression, magic: [UInt8] = magic) -> Data {
        var block = Data(count: headerSize + keys.count + values.count)
        var flags: UInt8 = 0
        var keysStored = 0
        var valuesStored = 0
        block.withUnsafeMutableBytes { out in
            keysStored = store(keys, into: UnsafeMutableRawBufferPointer(rebasing: out[headerSize...]))
            // A block keeps a byte per record (`shares`): raw, a record's keys take 7 at least.
            if headerSize + keysStored + values.count < count {
                keysStored = store(keys, into: UnsafeMutableRawBufferPointer(rebasing: out[headerSize...]), compression: nil)
            }
            valuesStored = store(values, into: UnsafeMutableRawBufferPointer(rebasing: out[(headerSize + keysStored)...]), compression: compression)
            if keysStored < keys.count { flags |= keysCompressed }
            if valuesStored < values.count { flags |= valuesCompressed }
            out.copyBytes(from: magic)
            out.storeBytes(of: UInt32(keysStored).littleEndian, toByteOffset: Offset.keysStored, as: UInt32.self)
            out.storeBytes(of: UInt32(keys.count).littleEndian, toByteOffset: Offset.keysRaw, as: UInt32.self)
            out.storeBytes(of: UInt32(valuesStored).littleEndian, toByteOffset: Offset.valuesStored, as: UInt32.self)
            out.storeBytes(of: UInt32(values.count).littleEndian, toByteOffset: Offset.valuesRaw, as: UInt32.self)
            out.storeBytes(of: flags, toByteOffset: Offset.flags, as: UInt8.self)
            out.storeBytes(of: UInt8(count), toByteOffset: Offset.count, as: UInt8.self)
        }
        block.count = headerSize + keysStored + valuesStored
        block.withUnsafeMutableBytes { out in
            guard magic == Self.magic else {
                let checksum = XXHash64.hash(UnsafeRawBufferPointer(rebasing: out[Offset.checksummed...]))
                return out.storeBytes(of: checksum.littleEndian, toByteOffset: Offset.checksum, as: UInt64.self)
            }
            let keysEnd = headerSize + keysStored
            let keysSum = checksum32(UnsafeRawBufferPointer(rebasing: out[Offset.checksummed ..< keysEnd]))
            let valuesSum = checksum32(UnsafeRawBufferPointer(rebasing: out[keysEnd...]))
            out.storeBytes(of: keysSum.littleEndian, toByteOffset: Offset.keysChecksum, as: UInt32.self)
            out.storeBytes(of: valuesSum.littleEndian, toByteOffset: Offset.valuesChecksum, as: UInt32.self)
        }
        return block
    }

    /// How a block's values section is compressed; either way it is an LZ4
    /// block, read by the same decoder. The keys section is always `fast`:
    /// lz4hc saved 2 % of W8's keys sections, not worth its time.
    package enum Compression: Sendable {
        case fast
        /// lz4hc (`LZ4HighCompression`).
        case high
    }

    /// Writes `section` at the start of `destination` (which has room for it
    /// raw), compressed by `compression` when that saves a byte (nil: raw);
    /// returns its stored length.
    private static func store(_ section: [UInt8], into destination: UnsafeMutableRawBufferPointer, compression: Compression? = .fast) -> Int {
        section.withUnsafeBytes { source in
            guard !section.isEmpty else { return 0 }
            // One byte short of raw: LZ4 succeeds only when it saves space.
            let room = UnsafeMutableRawBufferPointer(rebasing: destination[..<(section.count - 1)])
            let compressed = switch compression {
            case .fast?: section.count > 1 ? LZ4.compress(source, into: room) : nil
            case .high?: section.count > 1 ? LZ4HighCompression.compress(source, into: room) : nil
            case nil: Int?.none
            }
            if let length = compressed { return length }
            UnsafeMutableRawBufferPointer(rebasing: destination[..<section.count]).copyMemory(from: source)
            return section.count
        }
    }

    /// `total` split among records of `weights` (`Record.weight`), as
    /// `shares(of:byEnds:)` splits it: a writer's shares of a block of keys in
    /// columns. A reader adds up the same weights (`KeyColumns.weight`) into
    /// the ends it splits by (`BlockKeys.read`).
    package static func shares(of total: Int, byWeights weights: some Sequence<Int>) -> [Int] {
        var sum = 0
        return shares(of: total, byEnds: weights.map { weight in
            sum += weight
            return sum
        })
    }

    /// `total` split among the records whose raw bytes end at `ends` (the
    /// first starts at 0): a byte each, the rest in proportion to their raw
    /// bytes, rounded so that the parts add up to `total`. Never 0: a length
    /// of 0 means "not on disk" to the index and the manifest. A sealed block
    /// is at least a byte per record long (its header alone is 32).
    package static func shares(of total: Int, byEnds ends: [Int]) -> [Int] {
        var shares: [Int] = []
        shares.reserveCapacity(ends.count)
        share(total, byEnds: ends) { shares.append($0) }
        return shares
    }

    /// `shares(of:byEnds:)`, each share handed to `take` in order rather
    /// than gathered (an open sets them in its records).
    package static func share(_ total: Int, byEnds ends: [Int], _ take: (Int) -> Void) {
        guard let whole = ends.last else { return }
        let spread = total - ends.count
        precondition(spread >= 0, "a block shorter than its record count")
        var given = 0
        for end in ends {
            let upTo = end == whole ? spread : spread * end / whole
            take(1 + upTo - given)
            given = upTo
        }
    }

    // MARK: - Reading

    /// The length the header at the start of `bytes` gives its block (of
    /// either layout), or nil when it does not start with a block's magic.
    /// Nothing else is checked.
    package static func blockLength(at bytes: UnsafeRawBufferPointer) -> Int? {
        if startsVersion3Block(bytes) { return bytes.count >= Version3.headerSize ? Version3.blockLength(at: bytes) : nil }
        guard startsCurrentHeader(bytes), bytes.count >= headerSize else { return nil }
        func field(_ offset: Int) -> Int { Int(UInt32(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: UInt32.self))) }
        return headerSize + field(Offset.keysStored) + field(Offset.valuesStored)
    }

    /// Whether `bytes` start with a block's magic, of either layout (a record
    /// of version 2 starts with `EntryFile.magic`).
    package static func startsBlock(_ bytes: UnsafeRawBufferPointer) -> Bool {
        startsCurrentHeader(bytes) || startsVersion3Block(bytes)
    }

    /// Whether `bytes` start with the magic of a block with this header
    /// (version 5's and 6's have one checksum of the whole block where it has two).
    static func startsCurrentHeader(_ bytes: UnsafeRawBufferPointer) -> Bool {
        starts(bytes, with: magic) || starts(bytes, with: version6Magic) || starts(bytes, with: rowsMagic)
    }

    static func startsVersion3Block(_ bytes: UnsafeRawBufferPointer) -> Bool {
        starts(bytes, with: Version3.magic)
    }

    /// Whether `bytes` start with the four bytes of `magic`, compared as one
    /// word: `prefix(4).elementsEqual` took the generic sequence comparison,
    /// about 200 instructions a check, and an open checks each block three times.
    static func starts(_ bytes: UnsafeRawBufferPointer, with magic: [UInt8]) -> Bool {
        bytes.count >= 4 && bytes.loadUnaligned(as: UInt32.self) == magic.withUnsafeBytes { $0.loadUnaligned(as: UInt32.self) }
    }

    /// A record as read back: its header as a file of its own would give it,
    /// and where its value is in the decompressed values.
    package struct Decoded: Sendable {
        package var header: EntryFile.Header
        package var value: Range<Int>
    }

    /// A block's records, decompressed and checked, with each one's share of the block.
    package struct Contents: Sendable {
        /// The bytes the records' value ranges are in.
        package var body: Data
        package var records: [Decoded]
        package var shares: [Int]

        package func value(of index: Int) -> Data { body.subdata(in: records[index].value) }
    }

    /// Checks the whole of `block` (magic, checksums, lengths, every record)
    /// and decodes it, values included. Never traps on hostile input.
    /// - Complexity: O(n) in the block's raw length.
    package static func decode(_ block: UnsafeRawBufferPointer) throws(EntryFile.Damage) -> Contents {
        if startsVersion3Block(block) { return try Version3.decode(block) }
        let keys = try BlockKeys(block)
        let sections = try Sections(block)
        var values = Data(count: sections.valuesRaw)
        try values.withUnsafeMutableBytes { out in Result { () throws(EntryFile.Damage) in try sections.values(into: out) } }.get()
        let records = zip(keys.records.indices, keys.valueRanges()).map { Decoded(header: keys.header($0), value: $1) }
        return Contents(body: values, records: records, shares: keys.records.map { Int($0.share) })
    }

    /// `decode` of a block held in a `Data`.
    package static func decode(_ block: Data) throws(EntryFile.Damage) -> Contents {
        try block.withUnsafeBytes { raw in Result { () throws(EntryFile.Damage) in try decode(raw) } }.get()
    }

    /// Every record of `block` without its value, and each one's share: the
    /// whole block is checked, but only the keys section is decompressed.
    /// (A block of version 3 is decoded whole.)
    package static func headers(_ block: UnsafeRawBufferPointer) throws(EntryFile.Damage) -> (headers: [EntryFile.Header], shares: [Int]) {
        let keys = try BlockKeys(block)
        return (keys.records.indices.map(keys.header), keys.records.map { Int($0.share) })
    }

    /// Record `index` of `block` and its value, for a read: the block's
    /// magic, checksums and lengths are checked, its keys section decoded up
    /// to that record and its values decompressed up to that record's end.
    /// Never traps on hostile input.
    package static func record(_ index: Int, in block: UnsafeRawBufferPointer) throws(EntryFile.Damage) -> (header: EntryFile.Header, payload: Data) {
        if startsVersion3Block(block) { return try Version3.record(index, in: block) }
        let sections = try Sections(block)
        guard index < sections.count else { throw .lengthMismatch(expected: index + 1, actual: sections.count) }
        let (header, value) = try sections.record(index)
        // The values live only until this one is copied out: no zeroed buffer, no `Data` around them.
        let values = UnsafeMutableRawBufferPointer.allocate(byteCount: value.upperBound, alignment: 8)
        defer { values.deallocate() }
        try sections.values(into: values)
        return (header, Data(UnsafeRawBufferPointer(rebasing: values[value])))
    }

    /// Whether a section's stored and raw lengths agree with its flag.
    static func lengthsAgree(stored: Int, raw: Int, isCompressed: Bool) -> Bool {
        isCompressed
            ? stored < raw && raw <= min(stored * EntryFile.largestCompressionRatio, maximumRawLength)
            : stored == raw
    }
}

/// A block of the current layout whose header, lengths and checksum check out.
struct Sections {
    let keysStored: UnsafeRawBufferPointer
    let keysRaw: Int
    let valuesStored: UnsafeRawBufferPointer
    let valuesRaw: Int
    let keysCompressed: Bool
    let valuesCompressed: Bool
    let count: Int
    /// Whether the keys section is in columns (`KeyColumns`), else a record after another (`KeysReader`).
    let hasKeyColumns: Bool

    init(_ block: UnsafeRawBufferPointer, verifying verification: SegmentBlock.Verification = .block) throws(EntryFile.Damage) {
        typealias Offset = SegmentBlock.Offset
        let headerSize = SegmentBlock.headerSize
        guard block.count >= headerSize else { throw .truncated(length: block.count) }
        guard SegmentBlock.startsCurrentHeader(block) else { throw .badMagic }
        hasKeyColumns = !SegmentBlock.starts(block, with: SegmentBlock.rowsMagic)
        func field<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> T {
            T(littleEndian: block.loadUnaligned(fromByteOffset: offset, as: T.self))
        }
        let keysStoredLength = Int(field(Offset.keysStored, UInt32.self))
        let valuesStoredLength = Int(field(Offset.valuesStored, UInt32.self))
        keysRaw = Int(field(Offset.keysRaw, UInt32.self))
        valuesRaw = Int(field(Offset.valuesRaw, UInt32.self))
        let flags = field(Offset.flags, UInt8.self)
        count = Int(field(Offset.count, UInt8.self))
        let length = headerSize + keysStoredLength + valuesStoredLength
        guard length == block.count else { throw .lengthMismatch(expected: length, actual: block.count) }
        guard flags & ~0b11 == 0, field(Offset.reserved, UInt16.self) == 0 else { throw .unknownFlags(UInt16(flags)) }
        if SegmentBlock.starts(block, with: SegmentBlock.magic) {
            let keysEnd = headerSize + keysStoredLength
            guard field(Offset.keysChecksum, UInt32.self) == SegmentBlock.checksum32(UnsafeRawBufferPointer(rebasing: block[Offset.checksummed ..< keysEnd])),
                  verification == .keys
                  || field(Offset.valuesChecksum, UInt32.self) == SegmentBlock.checksum32(UnsafeRawBufferPointer(rebasing: block[keysEnd...]))
            else { throw .checksumMismatch }
        } else {
            guard field(Offset.checksum, UInt64.self) == XXHash64.hash(UnsafeRawBufferPointer(rebasing: block[Offset.checksummed...])) else {
                throw .checksumMismatch
            }
        }
        keysCompressed = flags & 0b01 != 0
        valuesCompressed = flags & 0b10 != 0
        guard SegmentBlock.lengthsAgree(stored: keysStoredLength, raw: keysRaw, isCompressed: keysCompressed), keysRaw > 0, count > 0 else {
            throw .lengthMismatch(expected: keysRaw, actual: keysStoredLength)
        }
        guard SegmentBlock.lengthsAgree(stored: valuesStoredLength, raw: valuesRaw, isCompressed: valuesCompressed) else {
            throw .lengthMismatch(expected: valuesRaw, actual: valuesStoredLength)
        }
        keysStored = UnsafeRawBufferPointer(rebasing: block[headerSize ..< headerSize + keysStoredLength])
        valuesStored = UnsafeRawBufferPointer(rebasing: block[(headerSize + keysStoredLength)...])
    }

    /// Calls `body` with the raw keys section.
    private func withKeys<T>(_ body: (UnsafeRawBufferPointer) throws(EntryFile.Damage) -> T) throws(EntryFile.Damage) -> T {
        guard keysCompressed else { return try body(keysStored) }
        let raw = UnsafeMutableRawBufferPointer.allocate(byteCount: keysRaw, alignment: 8)
        defer { raw.deallocate() }
        guard LZ4.decompress(keysStored, into: raw) else { throw .undecompressible }
        return try body(UnsafeRawBufferPointer(raw))
    }

    /// The raw keys section, in `raw`, whose storage is reused (`BlockKeys` keeps it).
    func rawKeys(into raw: inout [UInt8]) throws(EntryFile.Damage) {
        // Every byte is written below, or the section is refused.
        raw.resize(to: keysRaw, filler: 0)
        let decompressed = raw.withUnsafeMutableBytes { raw in
            guard keysCompressed else {
                raw.copyMemory(from: keysStored)
                return true
            }
            return LZ4.decompress(keysStored, into: raw)
        }
        guard decompressed else { throw .undecompressible }
    }

    /// Record `index`, and its value's range in the values section.
    func record(_ index: Int) throws(EntryFile.Damage) -> (EntryFile.Header, Range<Int>) {
        try withKeys { raw throws(EntryFile.Damage) in
            let header: EntryFile.Header, value: Range<Int>
            if hasKeyColumns {
                (header, value) = try KeyColumns.record(index, in: raw, count: count)
            } else {
                var reader = try KeysReader(raw, count: count)
                for _ in 0 ..< index { try reader.skipRecord() }
                (header, value) = try reader.readRecord()
            }
            guard value.upperBound <= valuesRaw else { throw .lengthMismatch(expected: valuesRaw, actual: value.upperBound) }
            return (header, value)
        }
    }

    /// Fills `destination` with the first `destination.count` raw bytes of
    /// the values section (LZ4 stops decoding there).
    func values(into destination: UnsafeMutableRawBufferPointer) throws(EntryFile.Damage) {
        guard destination.count > 0 else { return }
        guard valuesCompressed else {
            destination.copyMemory(from: UnsafeRawBufferPointer(rebasing: valuesStored[..<destination.count]))
            return
        }
        guard destination.count == valuesRaw
            ? LZ4.decompress(valuesStored, into: destination)
            : LZ4.decompress(valuesStored, prefixInto: destination)
        else { throw .undecompressible }
    }
}

/// Reads a raw keys section of format version 5 (magic "KBL2"): its bases
/// and key-space list, then one record at a time (flags, key space, key as a
/// varint length and bytes, expiry in ms above the base, zigzag sequence,
/// value length), counting where each value lies in the values section.
struct KeysReader {
    private let raw: UnsafeRawBufferPointer
    private var reader: BinaryReader
    private let prelude: SegmentBlock.Prelude
    private var previousSequence: UInt64
    /// Where the next record's value starts in the values section.
    private(set) var valuesEnd = 0

    init(_ raw: UnsafeRawBufferPointer, count: Int) throws(EntryFile.Damage) {
        self.raw = raw
        reader = BinaryReader(raw)
        prelude = try SegmentBlock.Prelude(&reader, recordCount: count)
        previousSequence = prelude.baseSequence
    }

    var remaining: Int { reader.remaining }
    var offset: Int { reader.offset }
    var spaces: [BlockKeys.Space] { prelude.spaces.entries }

    mutating func skipRecord() throws(EntryFile.Damage) {
        do {
            try SegmentBlock.skipKey(&reader)
            _ = try reader.readVarint()
            previousSequence &+= SegmentBlock.unzigzag(try reader.readVarint())
            let (end, overflow) = valuesEnd.addingReportingOverflow(Int(clamping: try reader.readVarint()))
            guard !overflow else { throw EntryFile.Damage.lengthMismatch(expected: valuesEnd, actual: end) }
            valuesEnd = end
        } catch {
            throw error as? EntryFile.Damage ?? .truncated(length: reader.offset)
        }
    }

    /// The next record's fields, every one checked as `SegmentBlock.header` checks them.
    mutating func readFields() throws(EntryFile.Damage) -> BlockKeys.Fields {
        do {
            let flags = try reader.read(UInt8.self)
            guard flags & ~SegmentBlock.tombstoneFlag == 0 else { throw EntryFile.Damage.unknownFlags(UInt16(flags)) }
            let space = try reader.readVarint()
            guard prelude.spaces.names(space) else { throw EntryFile.Damage.invalidName }
            let keyLength = Int(clamping: try reader.readVarint())
            let keyStart = reader.offset
            let key = try reader.readBytes(keyLength)
            guard !key.isEmpty, String.isValidUTF8(key) else { throw EntryFile.Damage.invalidName }
            let expiry = (prelude.baseExpiry &+ Int64(bitPattern: try reader.readVarint())) &* SegmentBlock.nanosecondsPerExpiryUnit
            previousSequence &+= SegmentBlock.unzigzag(try reader.readVarint())
            let valueLength = try reader.readVarint()
            let isTombstone = flags & SegmentBlock.tombstoneFlag != 0
            guard valueLength <= SegmentBlock.maximumRawLength, !isTombstone || valueLength == 0 else {
                throw EntryFile.Damage.lengthMismatch(expected: isTombstone ? 0 : SegmentBlock.maximumRawLength, actual: Int(clamping: valueLength))
            }
            guard previousSequence <= EntryFile.largestSequence else { throw EntryFile.Damage.sequenceOutOfRange(previousSequence) }
            valuesEnd += Int(valueLength)
            return BlockKeys.Fields(
                expiry: expiry, sequence: previousSequence, keyStart: UInt32(keyStart), keyLength: UInt32(key.count),
                valueLength: UInt32(valueLength), share: 0, space: UInt16(space), isTombstone: isTombstone
            )
        } catch {
            throw error as? EntryFile.Damage ?? .truncated(length: reader.offset)
        }
    }

    /// The next record as a file of its own would give its header, and its value's range in the values section.
    mutating func readRecord() throws(EntryFile.Damage) -> (EntryFile.Header, Range<Int>) {
        let valueStart = valuesEnd
        let fields = try readFields()
        let space = prelude.spaces.entries[Int(fields.space)]
        let key = String(decoding: UnsafeRawBufferPointer(rebasing: raw[Int(fields.keyStart) ..< Int(fields.keyStart + fields.keyLength)]).assumingMemoryBound(to: UInt8.self), as: UTF8.self)
        return (fields.header(key: key, space: space), valueStart ..< valuesEnd)
    }
}

// MARK: - What both layouts share

extension SegmentBlock {
    /// What both layouts start a body (the keys section) with: the base
    /// expiry (ns in version 3, ms since), the base sequence, and the key spaces.
    struct Prelude {
        let baseExpiry: Int64
        let baseSequence: UInt64
        let spaces: SpaceList

        /// Read from `reader`; the key-space list goes into the storage of `entries`, when it has any.
        init(_ reader: inout BinaryReader, recordCount: Int, reusing entries: consuming [BlockKeys.Space] = []) throws(EntryFile.Damage) {
            do {
                baseExpiry = try reader.read(Int64.self)
                baseSequence = try reader.read(UInt64.self)
            } catch {
                throw .truncated(length: reader.offset)
            }
            spaces = try SpaceList(&reader, recordCount: recordCount, reusing: entries)
        }
    }

    /// A block's list of the key spaces its records name: each one's name
    /// and kind. The names become strings once a block, not once a record
    /// (at W8's open a string a record was a twentieth of the time); a name
    /// that is not UTF-8 is damage only when a record names it.
    struct SpaceList {
        let entries: [BlockKeys.Space]

        init(_ reader: inout BinaryReader, recordCount: Int, reusing storage: consuming [BlockKeys.Space] = []) throws(EntryFile.Damage) {
            do {
                let spaceCount = try reader.readVarint()
                // A record names one key space: more than records would be damage.
                guard spaceCount <= recordCount else {
                    throw EntryFile.Damage.lengthMismatch(expected: recordCount, actual: Int(clamping: spaceCount))
                }
                var entries = storage
                entries.removeAll(keepingCapacity: true)
                for _ in 0 ..< spaceCount {
                    let kind = try reader.read(UInt8.self)
                    guard EntryFile.kinds.contains(kind) else { throw EntryFile.Damage.unknownKind(kind) }
                    entries.append(BlockKeys.Space(name: String(validUTF8: try reader.readBytes(Int(clamping: try reader.readVarint()))), kind: kind))
                }
                self.entries = entries
            } catch {
                throw error as? EntryFile.Damage ?? .truncated(length: reader.offset)
            }
        }

        /// Key space `index`'s name and kind.
        func space(_ index: UInt64) throws(EntryFile.Damage) -> (name: String, kind: UInt8) {
            guard names(index), let name = entries[Int(index)].name else { throw .invalidName }
            return (name, entries[Int(index)].kind)
        }

        /// Whether a record may name key space `index`: it is in the list, and its name is UTF-8.
        func names(_ index: UInt64) -> Bool {
            index < entries.count && entries[Int(index)].name != nil
        }
    }

    /// Steps over a record's flags, key-space index and key.
    static func skipKey(_ reader: inout BinaryReader) throws {
        _ = try reader.read(UInt8.self)
        _ = try reader.readVarint()
        _ = try reader.readBytes(Int(clamping: try reader.readVarint()))
    }

    /// Reads a record's flags, key-space index and key, which both layouts start it with.
    static func readKey(
        _ reader: inout BinaryReader, spaces: SpaceList
    ) throws -> (flags: UInt8, space: (name: String, kind: UInt8), key: String) {
        let flags = try reader.read(UInt8.self)
        guard flags & ~tombstoneFlag == 0 else { throw EntryFile.Damage.unknownFlags(UInt16(flags)) }
        let space = try spaces.space(try reader.readVarint())
        let keyBytes = try reader.readBytes(Int(clamping: try reader.readVarint()))
        guard !keyBytes.isEmpty, let key = String(validUTF8: keyBytes) else { throw EntryFile.Damage.invalidName }
        return (flags, space, key)
    }

    /// A record's header as a file of its own would give it.
    static func header(
        flags: UInt8, space: (name: String, kind: UInt8), key: String, expiry: Int64, sequence: UInt64, valueLength: Int
    ) throws(EntryFile.Damage) -> EntryFile.Header {
        let isTombstone = flags & tombstoneFlag != 0
        guard !isTombstone || valueLength == 0 else { throw .lengthMismatch(expected: 0, actual: valueLength) }
        guard sequence <= EntryFile.largestSequence else { throw .sequenceOutOfRange(sequence) }
        return EntryFile.Header(
            flags: isTombstone ? .tombstone : [], expiry: expiry, sequence: sequence,
            rawLength: valueLength, storedLength: valueLength, key: key, space: space.name, kind: space.kind
        )
    }
}
