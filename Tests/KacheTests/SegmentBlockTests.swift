import Foundation
import KacheStorage
import KacheTestSupport
import Testing

/// The block format of segment files: records gathered, their keys and
/// their values compressed apart, read back one at a time, and damage
/// confined to one block. Blocks of versions 3 and 4 still read.
@Suite struct SegmentBlockTests {
    static func record(_ key: String, space: String = "", kind: UInt8 = 0, sequence: UInt64, value: Data, tombstone: Bool = false) -> SegmentBlock.Record {
        SegmentBlock.Record(
            key: key, space: space, kind: kind, expiry: 1_700_000_000_000_000_000 + Int64(sequence) * 1_000_000_007,
            sequence: sequence, isTombstone: tombstone, value: value
        )
    }

    static func block(_ records: [SegmentBlock.Record], compression: SegmentBlock.Compression = .fast) -> (bytes: Data, charges: [Int]) {
        var builder = SegmentBlock.Builder()
        for record in records { builder.append(record) }
        return builder.seal(compression: compression)
    }

    /// Records of every kind: key spaces of each kind, a key outside ASCII, an
    /// empty value, a tombstone, values that compress and one that doesn't.
    static let mixed: [SegmentBlock.Record] = [
        record("a", sequence: 100, value: compressible(200, seed: 1)),
        record("ключ-é", sequence: 90, value: compressible(300, seed: 2)),
        record("p1", space: "pool", kind: 1, sequence: 101, value: Data()),
        record("7", space: "jobs", kind: 2, sequence: 250, value: incompressible(500, seed: 3)),
        record("gone", space: "pool", kind: 1, sequence: 300, value: Data(), tombstone: true),
        record("b", sequence: 5_000_000_000, value: compressible(1000, seed: 4)),
    ]

    @Test func recordsOfEveryKindComeBackAsTheyWent() throws {
        let (bytes, charges) = Self.block(Self.mixed)
        let contents = try SegmentBlock.decode(bytes)
        #expect(contents.records.count == Self.mixed.count)
        for (index, record) in Self.mixed.enumerated() {
            let header = contents.records[index].header
            #expect(header.key == record.key && header.space == record.space && header.kind == record.kind)
            // Kept to the millisecond, rounded down: never later than asked.
            #expect(header.expiry == record.expiry - record.expiry % 1_000_000 && header.sequence == record.sequence)
            #expect(header.isTombstone == record.isTombstone)
            #expect(header.rawLength == record.value.count)
            #expect(contents.value(of: index) == record.value)
        }
        // The shares add up to the block, so a segment's accounting adds up to its file.
        #expect(charges.count == Self.mixed.count && charges.reduce(0, +) == bytes.count)
        #expect(charges.allSatisfy { $0 >= 1 })
    }

    /// A share of 0 would read as "not on disk": even 255 records that LZ4
    /// squeezes into fewer bytes than their count each get a byte at least.
    @Test func everyRecordsShareIsAByteAtLeast() throws {
        let records = (0 ..< SegmentBlock.maximumRecords).map { _ in Self.record("k", sequence: 7, value: Data()) }
        let (bytes, charges) = Self.block(records)
        #expect(charges.count == records.count && charges.reduce(0, +) == bytes.count)
        #expect(charges.allSatisfy { $0 >= 1 })
        #expect(try SegmentBlock.decode(bytes).records.count == records.count)
        #expect(SegmentBlock.shares(of: 10, byEnds: [1, 2, 100]) == [1, 1, 8])
    }

    @Test func neighbouringValuesCompressTogether() throws {
        // JSON-like values that differ in a few fields, as W8's do.
        let records = (0 ..< 20).map { i in
            Self.record("key-\(i)", sequence: UInt64(i), value: Data(#"{"id":\#(i),"name":"user \#(i)","active":true,"tags":["a","b"]}"#.utf8))
        }
        let raw = records.reduce(0) { $0 + $1.key.utf8.count + $1.value.count }
        let (bytes, _) = Self.block(records)
        #expect(bytes.count < raw / 2, "a block of similar values takes less than half their raw bytes")
        #expect(try SegmentBlock.decode(bytes).records.map(\.header.key) == records.map(\.key))
    }

    /// lz4hc writes the same block format: the one decoder reads it, the
    /// whole block or one record at a time, and on JSON-like values it is
    /// smaller than the fast encoder's. Values it can't shrink stay raw.
    @Test func aBlockOfHighCompressionReadsAsAFastOneAndIsSmaller() throws {
        let records = (0 ..< 40).map { i in
            Self.record("key-\(i)", sequence: UInt64(i), value: Data(#"{"id":\#(i * 7919),"name":"user \#(i % 13)","score":\#(i * 31 % 97),"tags":["a","b"],"active":\#(i % 2 == 0)}"#.utf8))
        }
        let (fast, _) = Self.block(records)
        let (high, charges) = Self.block(records, compression: .high)
        #expect(high.count < fast.count, "lz4hc took \(high.count) bytes, the fast encoder \(fast.count)")
        #expect(charges.reduce(0, +) == high.count)
        let contents = try SegmentBlock.decode(high)
        #expect(contents.records.map(\.header) == (try SegmentBlock.decode(fast)).records.map(\.header))
        for index in records.indices {
            #expect(contents.value(of: index) == records[index].value)
            let (_, payload) = try high.withUnsafeBytes { raw in
                try Result { () throws(EntryFile.Damage) in try SegmentBlock.record(index, in: raw) }.get()
            }
            #expect(payload == records[index].value)
        }
        let raw = (0 ..< 3).map { Self.record("r\($0)", sequence: UInt64($0), value: incompressible(900, seed: UInt64($0 + 20))) }
        let (rawBlock, _) = Self.block(raw, compression: .high)
        #expect(rawBlock[rawBlock.startIndex + 28] & 0b10 == 0, "the values' compressed flag is clear")
        #expect(try SegmentBlock.decode(rawBlock).records.indices.map { try SegmentBlock.decode(rawBlock).value(of: $0) } == raw.map(\.value))
    }

    @Test func anIncompressibleBlockIsStoredRawAndReadsBack() throws {
        let records = (0 ..< 3).map { Self.record("r\($0)", sequence: UInt64($0), value: incompressible(900, seed: UInt64($0 + 10))) }
        let (bytes, _) = Self.block(records)
        #expect(bytes[bytes.startIndex + 28] & 0b10 == 0, "the values' compressed flag is clear")
        let contents = try SegmentBlock.decode(bytes)
        #expect((0 ..< 3).map { contents.value(of: $0) } == records.map(\.value))
    }

    /// The read of one record decodes it as the whole block's decoding does.
    @Test func oneRecordReadsAsTheWholeBlockDecodesIt() throws {
        for records in [Self.mixed, (0 ..< 3).map { Self.record("raw\($0)", sequence: UInt64($0), value: incompressible(300, seed: UInt64($0))) }] {
            let (bytes, _) = Self.block(records)
            let contents = try SegmentBlock.decode(bytes)
            for index in records.indices {
                let (header, payload) = try bytes.withUnsafeBytes { raw in
                    try Result { () throws(EntryFile.Damage) in try SegmentBlock.record(index, in: raw) }.get()
                }
                #expect(header == contents.records[index].header && payload == contents.value(of: index))
            }
        }
    }

    @Test func everyFlippedBitAndEveryTruncationIsCaught() {
        let (bytes, _) = Self.block(Array(Self.mixed.prefix(3)))
        func readOne(_ block: Data) throws {
            _ = try block.withUnsafeBytes { raw in try Result { () throws(EntryFile.Damage) in try SegmentBlock.record(2, in: raw) }.get() }
        }
        for position in 0 ..< bytes.count {
            for bit in [0, 3, 7] {
                var damaged = bytes
                damaged[damaged.startIndex + position] ^= UInt8(1 << bit)
                #expect(throws: EntryFile.Damage.self, "a flipped bit at byte \(position)") { try SegmentBlock.decode(damaged) }
                #expect(throws: EntryFile.Damage.self, "a flipped bit at byte \(position), one record read") { try readOne(damaged) }
            }
        }
        for length in 0 ..< bytes.count {
            #expect(throws: EntryFile.Damage.self, "cut to \(length) bytes") { try SegmentBlock.decode(bytes.prefix(length)) }
            #expect(throws: EntryFile.Damage.self, "cut to \(length) bytes, one record read") { try readOne(bytes.prefix(length)) }
        }
    }

    /// Mutated blocks with their checksum made right again, so that the
    /// mutations reach the lengths, the decompressor and the parser: neither
    /// decoder traps, and where the whole block decodes, each record read
    /// alone agrees with it.
    @Test func resealedMutationsNeverTrapAndBothDecodersAgree() {
        var random = SeededGenerator(seed: 32)
        let blocks = [
            Self.block(Self.mixed).bytes,
            Self.block((0 ..< 5).map { Self.record("k\($0)", sequence: UInt64($0), value: incompressible(40, seed: UInt64($0))) }).bytes,
        ]
        for _ in 0 ..< 3_000 {
            var block = blocks[Int.random(in: 0 ..< blocks.count, using: &random)]
            for _ in 0 ..< Int.random(in: 1 ... 4, using: &random) {
                let position = Int.random(in: 12 ..< block.count, using: &random)
                block[block.startIndex + position] = UInt8.random(in: 0 ... 255, using: &random)
            }
            block.withUnsafeMutableBytes(BlockSections.reseal)
            let whole = try? SegmentBlock.decode(block)
            if let whole {
                // What an open reads agrees too.
                let keys = block.withUnsafeBytes { raw in try? BlockKeys(raw) }
                #expect(keys.map { keys in keys.records.indices.map(keys.header) } == whole.records.map(\.header))
            }
            for index in 0 ..< 8 {
                let one = block.withUnsafeBytes { raw in try? Result { () throws(EntryFile.Damage) in try SegmentBlock.record(index, in: raw) }.get() }
                guard let whole else { continue }
                if index < whole.records.count {
                    #expect(one?.header == whole.records[index].header && one?.payload == whole.value(of: index))
                } else {
                    #expect(one == nil)
                }
            }
        }
    }

    /// A header whose checksum is right but whose raw length is huge must not
    /// make the reader allocate it.
    @Test(arguments: [(rawField: 16, storedField: 12), (rawField: 24, storedField: 20)])
    func aHostileRawLengthIsRefusedBeforeAnyAllocation(rawField: Int, storedField: Int) {
        let (bytes, _) = Self.block(Array(Self.mixed.prefix(2)))
        let stored = bytes.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: storedField, as: UInt32.self))) }
        for rawLength in [UInt32.max, UInt32(SegmentBlock.maximumRawLength + 1)] {
            var hostile = bytes
            hostile.withUnsafeMutableBytes { raw in
                raw.storeBytes(of: rawLength.littleEndian, toByteOffset: rawField, as: UInt32.self)
                BlockSections.reseal(raw)
            }
            #expect(throws: EntryFile.Damage.lengthMismatch(expected: Int(rawLength), actual: stored)) {
                try SegmentBlock.decode(hostile)
            }
        }
    }

    /// An open reads each record's key from the keys section alone: a values
    /// section LZ4 can't decode (checksum made right again) still gives every
    /// header and share, as the whole decoding would, while any read of a
    /// value is damage.
    @Test func theHeadersComeFromTheKeysSectionAlone() throws {
        let records = (0 ..< 6).map { Self.record("k\($0)", sequence: UInt64(40 - $0 * 3), value: compressible(400, seed: $0)) }
        let (bytes, charges) = Self.block(records)
        let whole = try SegmentBlock.decode(bytes)
        let (headers, shares) = try bytes.withUnsafeBytes { raw in try Result { () throws(EntryFile.Damage) in try SegmentBlock.headers(raw) }.get() }
        #expect(headers == whole.records.map(\.header) && shares == whole.shares && shares == charges)
        #expect(headers.map(\.sequence) == records.map(\.sequence), "sequences that fall as well as rise")
        var broken = bytes
        let keysStored = bytes.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self))) }
        broken.withUnsafeMutableBytes { raw in
            // A literal run's length byte that promises more than the section holds.
            raw[SegmentBlock.headerSize + keysStored] = 0xF0
            BlockSections.reseal(raw)
        }
        let (brokenHeaders, _) = try broken.withUnsafeBytes { raw in try Result { () throws(EntryFile.Damage) in try SegmentBlock.headers(raw) }.get() }
        #expect(brokenHeaders == headers)
        #expect(throws: EntryFile.Damage.undecompressible) { try SegmentBlock.decode(broken) }
    }

    /// Compaction copies a record into a block of other neighbours: its
    /// expiry, rounded as an absolute instant, comes out the same, so two
    /// copies of one version never disagree.
    @Test func aCopyOfARecordKeepsItsExpiry() throws {
        let original = SegmentBlock.Record(key: "k", space: "", kind: 0, expiry: 1_700_000_000_123_456_789, sequence: 9, value: compressible(100))
        let first = try SegmentBlock.decode(Self.block([original]).bytes).records[0].header
        var copy = original
        copy.expiry = first.expiry
        let neighbour = SegmentBlock.Record(key: "n", space: "", kind: 0, expiry: 1_700_000_000_000_000_001, sequence: 10, value: compressible(100))
        let second = try SegmentBlock.decode(Self.block([neighbour, copy]).bytes).records[1].header
        #expect(first.expiry == 1_700_000_000_123_000_000 && second.expiry == first.expiry)
        // Before the epoch, rounded down too.
        let early = SegmentBlock.Record(key: "e", space: "", kind: 0, expiry: -1_500_000, sequence: 1, value: Data([1]))
        #expect(try SegmentBlock.decode(Self.block([early]).bytes).records[0].header.expiry == -2_000_000)
    }

    /// Blocks of versions 3 and 4 (magic "KBLK", each value beside its key)
    /// read as they did: whole, one record at a time, and in a segment
    /// beside blocks of today's layout.
    @Test func blocksOfVersion3StillRead() throws {
        let records = Array(Self.mixed.prefix(4))
        let old = Version3Block.seal(records)
        let contents = try SegmentBlock.decode(old)
        #expect(contents.records.map(\.header.key) == records.map(\.key))
        #expect(contents.records.map(\.header.expiry) == records.map(\.expiry), "kept to the nanosecond")
        #expect(records.indices.map { contents.value(of: $0) } == records.map(\.value))
        #expect(contents.shares.reduce(0, +) == old.count)
        for index in records.indices {
            let (header, payload) = try old.withUnsafeBytes { raw in try Result { () throws(EntryFile.Damage) in try SegmentBlock.record(index, in: raw) }.get() }
            #expect(header == contents.records[index].header && payload == records[index].value)
        }
        let new = Self.block([Self.record("new", sequence: 500, value: compressible(200))]).bytes
        var damaged = old
        damaged[damaged.startIndex + 30] ^= 1
        let scan = SegmentStore.scan(old + damaged + new)
        #expect(scan.records.map(\.header.key) == records.map(\.key) + ["new"])
        #expect(scan.damagedRanges == [old.count ..< 2 * old.count])
    }

    // MARK: - Keys in columns (format version 6) and in rows (version 5)

    /// The writer lays the keys section and the header out as
    /// docs/FORMAT.md says, byte for byte: the same records written by hand
    /// from the document (both checksums included) seal to the same block.
    @Test func theKeysSectionIsLaidOutAsTheFormatSays() {
        for records in [Self.mixed, Self.sequentialKeys(40)] {
            let written = Self.block(records).bytes
            #expect(BlockSections.raw(written).keys == BlockSections.raw(BlockSections.version6Block(records)).keys)
            #expect(written == BlockSections.currentBlock(records))
        }
    }

    /// Blocks of format version 6 (magic "KBL3", one checksum) read as
    /// they did: whole, one record at a time, and in a segment beside blocks
    /// of today's layout, checked whole even where a scan checks keys alone.
    @Test func blocksOfVersion6StillRead() throws {
        let old = BlockSections.version6Block(Self.mixed)
        #expect(old.prefix(4) == Data("KBL3".utf8) && old.count == Self.block(Self.mixed).bytes.count)
        let contents = try SegmentBlock.decode(old)
        let current = try SegmentBlock.decode(Self.block(Self.mixed).bytes)
        #expect(contents.records.map(\.header) == current.records.map(\.header))
        #expect(Self.mixed.indices.map { contents.value(of: $0) } == Self.mixed.map(\.value))
        #expect(contents.shares.reduce(0, +) == old.count)
        for index in Self.mixed.indices {
            let (header, payload) = try old.withUnsafeBytes { raw in try Result { () throws(EntryFile.Damage) in try SegmentBlock.record(index, in: raw) }.get() }
            #expect(header == contents.records[index].header && payload == Self.mixed[index].value)
        }
        let new = Self.block([Self.record("new", sequence: 500, value: compressible(200))]).bytes
        var damagedValues = old
        damagedValues[damagedValues.count - 3] ^= 0x20
        for verification in [SegmentBlock.Verification.block, .keys] {
            let scan = SegmentStore.scan(old + damagedValues + new, verifying: verification) { _ in }
            #expect(scan.damagedRanges == [old.count ..< 2 * old.count], "\(verification): a block of version 6 is checked whole")
        }
    }

    /// A scan that checks keys alone (a clean open) catches a flipped bit
    /// anywhere in a block's header or keys section, and finds the block
    /// whole when the bit is in its values or their checksum, which the read
    /// of a record, and every other scan, still catch.
    @Test func aScanOfKeysAloneCatchesDamageBeforeTheValuesAndReadsCatchTheRest() throws {
        let records = Array(Self.mixed.prefix(4))
        let bytes = Self.block(records).bytes
        let keysEnd = SegmentBlock.headerSize + bytes.withUnsafeBytes { Int(UInt32(littleEndian: $0.loadUnaligned(fromByteOffset: 12, as: UInt32.self))) }
        #expect(keysEnd < bytes.count - 100, "a values section to damage")
        func keysOf(_ block: Data, _ verification: SegmentBlock.Verification) -> [String]? {
            block.withUnsafeBytes { raw in
                var keys = BlockKeys()
                guard (try? keys.read(raw, verifying: verification)) != nil else { return nil }
                return keys.records.indices.map { keys.header($0).key }
            }
        }
        #expect(keysOf(bytes, .keys) == records.map(\.key) && keysOf(bytes, .block) == records.map(\.key))
        for position in 0 ..< bytes.count {
            var damaged = bytes
            damaged[damaged.startIndex + position] ^= 0x08
            #expect(keysOf(damaged, .block) == nil, "a flipped bit at byte \(position), the whole block checked")
            if (8 ..< 12).contains(position) || position >= keysEnd {
                // The values or their checksum: not what an open checks.
                #expect(keysOf(damaged, .keys) == records.map(\.key), "a flipped bit at byte \(position), keys checked")
            } else {
                #expect(keysOf(damaged, .keys) == nil, "a flipped bit at byte \(position), keys checked")
            }
            if position >= keysEnd || (8 ..< 12).contains(position) {
                #expect(throws: EntryFile.Damage.checksumMismatch, "a read of a block flipped at byte \(position)") {
                    _ = try damaged.withUnsafeBytes { raw in try Result { () throws(EntryFile.Damage) in try SegmentBlock.record(0, in: raw) }.get() }
                }
            }
        }
    }

    /// Blocks of format version 5 (magic "KBL2", keys in rows) read as they
    /// did: whole, as an open reads them, one record at a time, and in a
    /// segment beside blocks of today's layout.
    @Test func blocksOfVersion5StillRead() throws {
        let old = BlockSections.version5Block(Self.mixed)
        #expect(old.prefix(4) == Data("KBL2".utf8))
        let contents = try SegmentBlock.decode(old)
        let current = try SegmentBlock.decode(Self.block(Self.mixed).bytes)
        #expect(contents.records.map(\.header) == current.records.map(\.header))
        #expect(Self.mixed.indices.map { contents.value(of: $0) } == Self.mixed.map(\.value))
        #expect(contents.shares.reduce(0, +) == old.count)
        let keys = try old.withUnsafeBytes { raw in try Result { () throws(EntryFile.Damage) in try BlockKeys(raw) }.get() }
        #expect(keys.records.indices.map(keys.header) == contents.records.map(\.header))
        #expect(keys.records.map { Int($0.share) } == contents.shares)
        for index in Self.mixed.indices {
            let (header, payload) = try old.withUnsafeBytes { raw in try Result { () throws(EntryFile.Damage) in try SegmentBlock.record(index, in: raw) }.get() }
            #expect(header == contents.records[index].header && payload == Self.mixed[index].value)
        }
        let new = Self.block([Self.record("new", sequence: 500, value: compressible(200))]).bytes
        let scan = SegmentStore.scan(old + new)
        #expect(scan.records.map(\.header.key) == Self.mixed.map(\.key) + ["new"])
        #expect(scan.damagedRanges.isEmpty && scan.validLength == old.count + new.count)
    }

    /// Keys share their prefixes with the key before, a prefix may end inside
    /// a character's UTF-8 (the key is checked whole), and key spaces mix:
    /// every key comes back whole, from the whole block, an open's reading
    /// and one record's read.
    @Test func keysThatSharePrefixesComeBackWhole() throws {
        let keys = ["ключ-б", "ключ-в", "ключ", "ключ-в-2", "k", "", "https://example.com/a/1", "https://example.com/a/12", "https://example.org"]
        let records = keys.enumerated().map { index, key in
            Self.record(key.isEmpty ? "x" : key, space: index % 3 == 0 ? "pool" : "", kind: index % 3 == 0 ? 1 : 0, sequence: UInt64(100 + index), value: compressible(50, seed: index))
        }
        let (bytes, charges) = Self.block(records)
        let contents = try SegmentBlock.decode(bytes)
        #expect(contents.records.map(\.header.key) == records.map(\.key))
        #expect(contents.records.map(\.header.space) == records.map(\.space))
        #expect(contents.shares == charges)
        let open = try bytes.withUnsafeBytes { raw in try Result { () throws(EntryFile.Damage) in try BlockKeys(raw) }.get() }
        #expect(open.records.map(open.key(of:)) == records.map(\.key))
        for index in records.indices {
            let (header, payload) = try bytes.withUnsafeBytes { raw in try Result { () throws(EntryFile.Damage) in try SegmentBlock.record(index, in: raw) }.get() }
            #expect(header == contents.records[index].header && payload == records[index].value)
        }
    }

    /// A scan reads every block of a segment into one `BlockKeys`, in the
    /// storage it has: each read gives what a fresh value reads, whatever
    /// came before it (a bigger block, a smaller one, other key spaces, a
    /// block of version 5 or 3, a damaged block that threw half-way).
    @Test func blocksReadOneAfterAnotherIntoOneValueReadAsEachAlone() throws {
        let big = Self.block((0 ..< 40).map { Self.record("key-\($0)", space: "pool", kind: 1, sequence: UInt64(10 + $0), value: compressible(90, seed: $0)) }).bytes
        let small = Self.block([Self.record("z", sequence: 3, value: compressible(70))]).bytes
        var damaged = Self.block(Self.mixed).bytes
        damaged[damaged.count - 5] ^= 0x10
        let blocks = [big, small, Self.block(Self.mixed).bytes, damaged, small, BlockSections.version5Block(Self.mixed), big, Version3Block.seal(Self.mixed), small]
        func fields(_ keys: BlockKeys) -> [String] {
            keys.records.indices.map { index in
                let record = keys.records[index]
                return "\(keys.header(index)) \(keys.key(of: record)) share \(record.share) space \(keys.spaces[Int(record.space)])"
            }
        }
        var reused = BlockKeys()
        var read = 0
        for block in blocks {
            let alone = block.withUnsafeBytes { raw in try? BlockKeys(raw) }
            let again: BlockKeys? = block.withUnsafeBytes { raw in
                (try? reused.read(raw)) == nil ? nil : reused
            }
            #expect((alone == nil) == (again == nil))
            guard let alone, let again else { continue }
            #expect(fields(again) == fields(alone))
            #expect(again.valueRanges() == alone.valueRanges())
            read += 1
        }
        #expect(read == blocks.count - 1)
    }

    /// Expiries split into seconds and milliseconds above the base come back
    /// to the millisecond, far apart or not.
    @Test func expiriesComeBackToTheMillisecond() throws {
        let base: Int64 = 1_700_000_000_000_000_000
        let offsets: [Int64] = [0, 999_999_999, 1_000_000_000, 3_599_999_000_000, 86_400_123_000_000, 400 * 86_400_000_000_000]
        let records = offsets.enumerated().map { index, offset in
            SegmentBlock.Record(key: "e\(index)", space: "", kind: 0, expiry: base + offset + 123_456, sequence: UInt64(index), value: Data([1]))
        }
        let contents = try SegmentBlock.decode(Self.block(records).bytes)
        #expect(contents.records.map(\.header.expiry) == records.map { $0.expiry - $0.expiry % 1_000_000 })
    }

    /// Columns a writer never makes are damage, not a trap: a key sharing
    /// more bytes than the key before has, a first key sharing any, a
    /// remainder of 1000 ms or more, a key left empty.
    @Test func columnsNoWriterMakesAreDamage() {
        let prelude = BlockSections.prelude(baseExpiry: 1_700_000_000_000, baseSequence: 1, spaces: [(0, "")])
        let fields = (0 ..< 3).map { BlockSections.Fields(key: Array("key-\($0)".utf8), expiryOffset: 1500, sequence: UInt64(1 + $0), valueLength: 4) }
        func block(_ keys: [UInt8], fields: [BlockSections.Fields] = fields) -> Data {
            SegmentBlock.seal(keys: prelude + keys, values: Array(repeating: 7, count: fields.reduce(0) { $0 + Int($1.valueLength) }), count: fields.count, compression: .fast)
        }
        #expect(throws: Never.self) { try SegmentBlock.decode(block(BlockSections.columns(fields, baseSequence: 1))) }
        let hostile: [(String, Data)] = [
            ("a shared length past the key before", block(BlockSections.columns(fields, baseSequence: 1, shared: [0, 6, 9]))),
            ("a first key that shares bytes", block(BlockSections.columns(fields, baseSequence: 1, shared: [1, 4, 4]))),
            ("a remainder of 1000 ms", block(BlockSections.columns(fields, baseSequence: 1, milliseconds: [500, 1000, 500]))),
            ("an empty key", block(BlockSections.columns([BlockSections.Fields(key: [], expiryOffset: 0, sequence: 1, valueLength: 4)], baseSequence: 1), fields: [fields[0]])),
            ("a tombstone with a value", block(BlockSections.columns([BlockSections.Fields(flags: 2, key: [65], expiryOffset: 0, sequence: 1, valueLength: 4)], baseSequence: 1), fields: [fields[0]])),
            ("a byte after the last column", block(BlockSections.columns(fields, baseSequence: 1) + [0])),
            ("a key that is not UTF-8", block(BlockSections.columns([BlockSections.Fields(key: [0x6B, 0xFF], expiryOffset: 0, sequence: 1, valueLength: 4)], baseSequence: 1), fields: [fields[0]])),
            // Whole as the keys lie back to back, but neither key is UTF-8 alone.
            ("a character split between two keys", block(BlockSections.columns([
                BlockSections.Fields(key: [0xC3], expiryOffset: 0, sequence: 1, valueLength: 4),
                BlockSections.Fields(key: [0xA9], expiryOffset: 0, sequence: 2, valueLength: 4),
            ], baseSequence: 1), fields: Array(fields[0 ..< 2]))),
        ]
        for (name, bytes) in hostile {
            #expect(throws: EntryFile.Damage.self, "\(name)") { try SegmentBlock.decode(bytes) }
            #expect(throws: EntryFile.Damage.self, "\(name), as an open reads it") {
                try bytes.withUnsafeBytes { raw in try Result { () throws(EntryFile.Damage) in try BlockKeys(raw) }.get() }
            }
            #expect(throws: EntryFile.Damage.self, "\(name), one record read") {
                try bytes.withUnsafeBytes { raw in try Result { () throws(EntryFile.Damage) in try SegmentBlock.record(0, in: raw) }.get() }
            }
        }
    }

    /// Random bytes written into the raw keys section, then sealed (so the
    /// mutations reach the column parser, behind LZ4 and the checksum): no
    /// decoder traps, and where the whole block decodes, an open's reading
    /// and each record read alone agree with it. Both layouts.
    @Test(arguments: [false, true])
    func rawKeysMutationsNeverTrapAndTheDecodersAgree(rows: Bool) {
        var random = SeededGenerator(seed: rows ? 55 : 56)
        let sources = [Self.mixed, Self.sequentialKeys(12)].map { records in
            let raw = BlockSections.raw(rows ? BlockSections.version5Block(records) : Self.block(records).bytes)
            return (raw.keys, raw.values, records.count)
        }
        var decoded = 0
        for _ in 0 ..< 3_000 {
            var (keys, values, count) = sources[Int.random(in: 0 ..< sources.count, using: &random)]
            for _ in 0 ..< Int.random(in: 1 ... 3, using: &random) {
                keys[Int.random(in: 16 ..< keys.count, using: &random)] = UInt8.random(in: 0 ... 255, using: &random)
            }
            let block = SegmentBlock.seal(keys: keys, values: values, count: count, compression: .fast, magic: rows ? SegmentBlock.rowsMagic : SegmentBlock.magic)
            let whole = try? SegmentBlock.decode(block)
            let open = block.withUnsafeBytes { raw in try? BlockKeys(raw) }
            #expect(open.map { open in open.records.indices.map(open.header) } == whole?.records.map(\.header))
            guard let whole else { continue }
            decoded += 1
            for index in whole.records.indices {
                let one = block.withUnsafeBytes { raw in try? Result { () throws(EntryFile.Damage) in try SegmentBlock.record(index, in: raw) }.get() }
                #expect(one?.header == whole.records[index].header && one?.payload == whole.value(of: index))
            }
        }
        #expect(decoded > 100, "some mutations (a key's byte, an expiry) still decode, and are compared")
    }

    /// W8's shape: keys in order, values alike, whole-second TTLs.
    static func sequentialKeys(_ count: Int) -> [SegmentBlock.Record] {
        (0 ..< count).map { i -> SegmentBlock.Record in
            let ttl = Int64(60 + i * 37 % 3541) * 1_000_000_000
            let expiry: Int64 = 1_700_000_000_000_000_000 + ttl + Int64(i) * 4000
            let value = Data(#"{"id":\#(i),"name":"user \#(i)"}"#.utf8)
            return SegmentBlock.Record(key: String(format: "key-%07d", i), space: "", kind: 0, expiry: expiry, sequence: UInt64(1000 + i), value: value)
        }
    }

    @Test func aBlockTakesAsManyRecordsAsItsTargetAndAtMost255() {
        var builder = SegmentBlock.Builder()
        var sequence: UInt64 = 0
        while builder.fits(Self.record("k\(sequence)", sequence: sequence, value: Data(count: 100))) {
            builder.append(Self.record("k\(sequence)", sequence: sequence, value: Data(count: 100)))
            sequence += 1
        }
        #expect(builder.rawLength <= SegmentBlock.targetRawLength && builder.rawLength > SegmentBlock.targetRawLength - 200)
        // Tiny records: the count is the limit.
        builder = SegmentBlock.Builder()
        while builder.fits(Self.record("k", sequence: 0, value: Data()), targetLength: .max) {
            builder.append(Self.record("k", sequence: 0, value: Data()))
        }
        #expect(builder.records.count == SegmentBlock.maximumRecords)
        // A record longer than the target makes a block of its own.
        #expect(SegmentBlock.Builder().fits(Self.record("big", sequence: 0, value: Data(count: 100_000))))
    }

    // MARK: - Segment files of blocks

    /// Three blocks back to back, the middle one with a flipped bit: the scan
    /// finds the records of the other two, and names the middle one's bytes.
    @Test func aFlippedBitCostsOnlyTheRecordsOfItsBlock() {
        let blocks = (0 ..< 3).map { b in
            Self.block((0 ..< 4).map { Self.record("b\(b)r\($0)", sequence: UInt64(b * 10 + $0), value: compressible(300, seed: b * 10 + $0)) }).bytes
        }
        var file = blocks[0] + blocks[1] + blocks[2]
        file[blocks[0].count + blocks[1].count / 2] ^= 0x04
        let scan = SegmentStore.scan(file)
        #expect(scan.records.map(\.header.key) == ["b0r0", "b0r1", "b0r2", "b0r3", "b2r0", "b2r1", "b2r2", "b2r3"])
        #expect(scan.damagedRanges == [blocks[0].count ..< blocks[0].count + blocks[1].count])
        #expect(scan.validLength == file.count)
        #expect(scan.records.filter { $0.header.key.hasPrefix("b2") }.map(\.offset) == Array(repeating: blocks[0].count + blocks[1].count, count: 4))
        #expect(scan.records.filter { $0.header.key.hasPrefix("b2") }.map(\.index) == [0, 1, 2, 3])
    }

    @Test func aTornBlockAtTheTailEndsTheValidPart() {
        let first = Self.block([Self.record("a", sequence: 1, value: compressible(500))]).bytes
        let torn = Self.block([Self.record("b", sequence: 2, value: compressible(500, seed: 9))]).bytes
        for cut in [5, SegmentBlock.headerSize, torn.count - 1] {
            let scan = SegmentStore.scan(first + torn.prefix(cut))
            #expect(scan.records.map(\.header.key) == ["a"])
            #expect(scan.validLength == first.count, "cut at \(cut)")
        }
    }

    /// A file of version 2 holds records where version 3 holds blocks; the
    /// scan reads either, so a directory of version 2 opens.
    @Test func theScanReadsRecordsOfVersion2AndBlocksAlike() {
        var draft = EntryFile.draft(name: EntryName(space: "", key: "old"), kind: 0, payload: compressible(200), expiry: 1, compressionThreshold: 64)
        draft.seal(sequence: 1)
        let block = Self.block([Self.record("new", sequence: 2, value: compressible(200))]).bytes
        let scan = SegmentStore.scan(draft.bytes + block)
        #expect(scan.records.map(\.header.key) == ["old", "new"])
        #expect(scan.records.map(\.length) == [draft.bytes.count, block.count])
    }

    /// An open takes a segment's blocks as the scan reads them (`BlockKeys`,
    /// no header per record): the same records, shares, damage and newest
    /// sequence as a scan that keeps the records, across every layout a
    /// segment may hold, and each record's fields as its header gives them.
    @Test func theBlocksAnOpenTakesHoldWhatTheScanKeeps() throws {
        var draft = EntryFile.draft(name: EntryName(space: "pool", key: "old"), kind: 1, payload: compressible(200), expiry: 1, compressionThreshold: 64)
        draft.seal(sequence: 7_000_000_000)
        let version3 = Version3Block.seal(Array(Self.mixed.prefix(3)))
        let version5 = BlockSections.version5Block(Array(Self.mixed.suffix(2)))
        var damaged = Self.block([Self.record("lost", sequence: 1, value: compressible(100))]).bytes
        damaged[damaged.startIndex + 40] ^= 1
        let current = Self.block(Self.mixed).bytes
        let segment = draft.bytes + version3 + version5 + damaged + current + current.prefix(20)
        let kept = SegmentStore.scan(segment)
        var blocks: [SegmentStore.ScannedBlock] = []
        let handed = SegmentStore.scan(segment) { blocks.append($0) }
        #expect(handed.records.isEmpty && blocks.count == 4)
        #expect(handed.validLength == kept.validLength && handed.damagedRanges == kept.damagedRanges)
        #expect(handed.latestSequence == 7_000_000_000 && kept.latestSequence == handed.latestSequence)
        var fromBlocks: [SegmentStore.ScannedRecord] = []
        for block in blocks {
            for (index, record) in block.keys.records.enumerated() {
                let header = block.keys.header(index)
                #expect(block.keys.key(of: record) == header.key && record.sequence == header.sequence && record.expiry == header.expiry)
                #expect(record.isTombstone == header.isTombstone && Int(record.valueLength) == header.rawLength)
                #expect(block.keys.spaces[Int(record.space)].name == header.space && block.keys.spaces[Int(record.space)].kind == header.kind)
                fromBlocks.append(SegmentStore.ScannedRecord(header: header, offset: block.offset, index: index, length: Int(record.share)))
            }
        }
        #expect(fromBlocks == kept.records)
        #expect(kept.records.map(\.header.key) == ["old"] + Self.mixed.prefix(3).map(\.key) + Self.mixed.suffix(2).map(\.key) + Self.mixed.map(\.key))
        #expect(kept.records.first?.header.flags.contains(.compressed) == true, "a record of version 2 keeps its own header")
    }

    /// A read takes one record out of a block by its location, including a
    /// block longer than the first read takes.
    @Test func aReadTakesOneRecordOutOfItsBlock() throws {
        let small = Self.block(Array(Self.mixed.prefix(4))).bytes
        let large = Self.block((0 ..< 3).map { Self.record("l\($0)", sequence: UInt64($0), value: incompressible(6000, seed: UInt64($0))) }).bytes
        let file = small + large
        func read(_ offset: Int, _ buffer: UnsafeMutableRawBufferPointer) -> Int {
            let part = file.subdata(in: offset ..< min(file.count, offset + buffer.count))
            part.copyBytes(to: buffer)
            return part.count
        }
        for index in 0 ..< 4 {
            let location = RecordLocation(segment: 1, offset: 0, index: index, length: 10)
            let (header, payload) = try SegmentStore.readRecord(at: location, read: read)
            #expect(header.key == Self.mixed[index].key && payload == Self.mixed[index].value)
        }
        for index in 0 ..< 3 {
            let (header, payload) = try SegmentStore.readRecord(at: RecordLocation(segment: 1, offset: small.count, index: index, length: 10), read: read)
            #expect(header.key == "l\(index)" && payload == incompressible(6000, seed: UInt64(index)))
        }
        #expect(throws: SegmentStore.ReadFailure.self, "an index past the block's records") {
            try SegmentStore.readRecord(at: RecordLocation(segment: 1, offset: 0, index: 4, length: 10), read: read)
        }
    }
}
