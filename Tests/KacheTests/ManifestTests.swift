import Foundation
import KacheStorage
import Testing
@testable import Kache

@Suite struct ManifestTests {
    static let settledSequences: [UInt64] = [0, 3, 4, 5, 900, 1 << 40]
    let manifest = Manifest(savedAt: 99, nextSequence: 1000, diskBudget: 1 << 30, spaces: [
        .init(name: "", kind: .topLevel, capacity: .max, counters: .init(), entries: [
            .init(key: "a", expiry: 10, sequence: 1, rawSize: 100, fileSize: 160),
            .init(key: "café", expiry: 20, sequence: 2, rawSize: 0, fileSize: 52),
        ]),
        .init(name: "avatars", kind: .pool, capacity: 500, counters: .init(evictions: 3, expirations: 4, pushes: 0, pops: 0), entries: []),
        .init(name: "jobs", kind: .queue, capacity: 10, counters: .init(evictions: 0, expirations: 0, pushes: 9, pops: 8), entries: [
            .init(key: "17", expiry: 30, sequence: 17, rawSize: 5, fileSize: 60),
        ]),
    ], settled: SettledSequences(ascending: settledSequences))

    func decode(_ bytes: [UInt8]) -> Result<Manifest, Manifest.Damage> {
        bytes.withUnsafeBytes { raw in Result { () throws(Manifest.Damage) in try Manifest(decoding: raw) } }
    }

    /// A next sequence the index could not hold is damage.
    @Test func aNextSequencePastTheLargestIsMalformed() {
        var saved = manifest
        saved.nextSequence = EntryFile.largestSequence + 1
        #expect((try? decode(saved.encoded()).get()) == saved)
        saved.nextSequence = EntryFile.largestSequence + 2
        #expect(decode(saved.encoded()) == .failure(.malformed))
    }

    @Test func roundTrips() throws {
        #expect(try decode(manifest.encoded()).get() == manifest)
    }

    /// The index hands entries over shard by shard, key spaces mixed; each
    /// lands in its own key space's place, in the order it came.
    @Test func entriesHandedOverInAnyOrderLandInTheirKeySpace() throws {
        let summaries = manifest.spaces.map { space in
            ManifestEncoder.Space(
                name: space.name, kind: space.kind, capacity: space.capacity, counters: space.counters,
                entryCount: space.entries.count, keyBytes: space.entries.reduce(0) { $0 + $1.key.utf8.count }
            )
        }
        let mixed = [(2, manifest.spaces[2].entries[0]), (0, manifest.spaces[0].entries[0]), (0, manifest.spaces[0].entries[1])]
        var reversed = Array(Self.settledSequences.reversed())
        let settled = SettledSequences.encoded(inAnyOrder: &reversed)
        let bytes = ManifestEncoder.encode(savedAt: 99, nextSequence: 1000, diskBudget: 1 << 30, spaces: summaries, settled: settled) { emit in
            for (space, entry) in mixed { emit(space, entry) }
        }
        #expect(bytes == manifest.encoded())
        #expect(try decode(bytes).get() == manifest)
        #expect(bytes.count == Manifest.encodedLength(spaceNameBytes: 11, spaces: 3, entries: 3, keyBytes: 8, settledBytes: settled.count))
    }

    /// A settled entry's version is found, and no other: runs spread thin or
    /// long (a search of the runs), or many short ones close together (a
    /// bitmap over their range).
    @Test(arguments: [[UInt64]([0, 3, 4, 5, 900, 1 << 40]), Array(5 ... 1000), [10, 11, 13, 70, 127, 128, 200]])
    func settledVersionsAreFoundAndNothingElseIs(_ sequences: [UInt64]) throws {
        var saved = manifest
        saved.settled = SettledSequences(ascending: sequences)
        let settled = try decode(saved.encoded()).get().settledVersions
        for sequence in UInt64(0) ... 1000 {
            #expect(settled.contains(sequence) == sequences.contains(sequence), "\(sequence)")
        }
        #expect(settled.contains(sequences.last!) && !settled.contains(sequences.last! + 1) && !settled.contains(.max))
    }

    /// Version 3 listed every entry, and nothing after the key spaces.
    @Test func aVersion3ManifestIsRead() throws {
        var version3 = manifest
        version3.settled = SettledSequences()
        let decoded = try decode(version3.encoded(asVersion: 3)).get()
        #expect(decoded == version3)
    }

    /// Version 4 listed the settled sequences one varint each: they are read
    /// as the same runs version 5 writes.
    @Test(arguments: [[UInt64](), [0, 3, 4, 5, 900, 1 << 40], Array(0 ..< 300)])
    func aVersion4ManifestIsRead(_ sequences: [UInt64]) throws {
        var version4 = manifest
        version4.settled = SettledSequences(ascending: sequences)
        let bytes = version4.encoded(asVersion: 4)
        #expect(bytes[12] == 4)
        let decoded = try decode(bytes).get()
        #expect(decoded == version4)
        #expect(decoded.settled.runs.flatMap { Array($0) } == sequences)
    }

    /// A version 4 list that repeats a sequence (a step of 0 after the first)
    /// is damage, as it always was.
    @Test func aVersion4ListThatRepeatsASequenceIsMalformed() {
        var version4 = manifest
        version4.settled = SettledSequences()
        var bytes = version4.encoded(asVersion: 4)
        bytes.removeLast(4)
        bytes += [2, 0, 0, 0, 7, 0]
        #expect(throws: Manifest.Damage.malformed) { try decode(Manifest.resealed(bytes)).get() }
    }

    // MARK: - Settled sequences as runs

    static let runCases: [(sequences: [UInt64], runs: [ClosedRange<UInt64>])] = [
        ([], []),
        ([7], [7 ... 7]),
        ([0, 2, 3, 4, 10, 11, 100], [0 ... 0, 2 ... 4, 10 ... 11, 100 ... 100]),
        ([1, 1, 2, 2, 3], [1 ... 3]),
        ([5, .max - 2, .max - 1, .max], [5 ... 5, .max - 2 ... .max]),
    ]

    /// Runs, gaps between them, single sequences and sequences at the very
    /// end of the range encode to the layout docs/FORMAT.md gives and come back the same.
    @Test(arguments: runCases)
    func settledSequencesRoundTripAsRuns(_ sequences: [UInt64], runs: [ClosedRange<UInt64>]) throws {
        let settled = SettledSequences(ascending: sequences)
        #expect(settled.runs == runs)
        var saved = manifest
        saved.settled = settled
        let decoded = try decode(saved.encoded()).get()
        #expect(decoded == saved)
        #expect(decoded.settled.runs == runs)
        for sequence in Set(sequences).union(sequences.map { $0 &+ 1 }).union(sequences.map { $0 &- 1 }) {
            #expect(decoded.settledVersions.contains(sequence) == sequences.contains(sequence), "\(sequence)")
        }
    }

    /// Each run is its gap and its length less one, after a count of runs;
    /// after the first run the gap leaves out the one sequence that must be missing.
    @Test func runsAreLaidOutAsTheFormatSays() {
        let settled = SettledSequences(ascending: [0, 2, 3, 4, 10, 11, 100, 300])
        #expect(settled.encoded() == [5, 0, 0, 0, 2, 4, 1, 87, 0, 0xC6, 0x01, 0])
    }

    /// Sequences in any order encode as their sorted list does: packed
    /// closely (a bitmap of their span) or spread thin (sorted), with runs
    /// across the bitmap's words and at both ends of it.
    @Test(arguments: [(UInt64(0), UInt64(1)), (1 << 20, 1), (0, 300), (UInt64.max - 100_000, 1)] as [(UInt64, UInt64)])
    func sequencesInAnyOrderEncodeAsTheirSortedList(start: UInt64, spread: UInt64) {
        var random = SeededGenerator(seed: start ^ spread)
        var sequences: [UInt64] = []
        var next = start
        while sequences.count < 5000 {
            let runLength = random.next() % 130 + 1
            for _ in 0 ..< runLength where next < .max - 1 {
                sequences.append(next)
                next += 1
            }
            let gap = random.next() % (spread * 70) + 1
            guard next < .max - 1 - gap else { break }
            next += gap
        }
        let expected = SettledSequences(ascending: sequences).encoded()
        var shuffled = sequences
        shuffled.shuffle(using: &random)
        #expect(SettledSequences.encoded(inAnyOrder: &shuffled) == expected)
        var one: [UInt64] = [start]
        #expect(SettledSequences.encoded(inAnyOrder: &one) == SettledSequences(ascending: [start]).encoded())
        var none: [UInt64] = []
        #expect(SettledSequences.encoded(inAnyOrder: &none) == [0])
    }

    /// A million sequences written once (W8) are one run: a few bytes where
    /// version 4 took about a byte each.
    @Test func oneRunOfEverythingTakesAFewBytes() throws {
        var sequences = Array(UInt64(0) ..< 1_000_000).reversed().map { $0 }
        let bytes = SettledSequences.encoded(inAnyOrder: &sequences)
        #expect(bytes == [1, 0, 0xBF, 0x84, 0x3D])
        var saved = manifest
        saved.settled = SettledSequences(ascending: 0 ..< 1_000_000)
        let decoded = try decode(saved.encoded()).get()
        #expect(decoded.settled.runs == [0 ... 999_999])
        let versions = decoded.settledVersions
        #expect(versions.contains(0) && versions.contains(999_999) && !versions.contains(1_000_000))
    }

    /// The manifest with its settled list replaced by `tail` (no runs are
    /// listed before it), checksum valid: hostile bytes that reach the runs' parser.
    func withSettledBytes(_ tail: [UInt8]) -> [UInt8] {
        var bare = manifest
        bare.settled = SettledSequences()
        var bytes = bare.encoded()
        bytes.removeLast(SettledSequences.emptyLength)
        return Manifest.resealed(bytes + tail)
    }

    static func varint(_ value: UInt64) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.appendVarint(value)
        return bytes
    }

    static let hostileRuns: [(what: String, tail: [UInt8])] = [
        ("a count of runs past what the bytes hold", varint(.max) + [0, 0]),
        ("a count of runs one more than listed", [2, 0, 0, 0x85, 0x01]),
        ("a gap past the last sequence", [2, 0, 0] + varint(.max) + [0]),
        ("a length past the last sequence", [1, 5] + varint(.max - 4)),
        ("a run after one that reached the end", [2, 0] + varint(.max) + [0, 0]),
        ("a run after one that ends a sequence before the end", [2] + varint(.max - 1) + [0, 0, 0]),
        ("a varint of eleven bytes", [1] + [UInt8](repeating: 0x80, count: 10) + [0, 0]),
        ("bytes after the runs", [1, 0, 0, 0]),
    ]

    /// Counts and runs the bytes can't hold, runs past the end of the
    /// sequences, and varints too long are a clear error, before anything is allocated.
    @Test(arguments: hostileRuns)
    func hostileRunsAreMalformed(_ what: String, tail: [UInt8]) {
        #expect(throws: Manifest.Damage.malformed, "\(what)") { try decode(withSettledBytes(tail)).get() }
    }

    /// A run may claim every sequence there is: it decodes, and asking about
    /// it allocates nothing in proportion to its length.
    @Test func aRunOfEverySequenceCostsNothingToAskAbout() throws {
        let decoded = try decode(withSettledBytes([1, 0] + Self.varint(.max))).get()
        #expect(decoded.settled.runs == [0 ... .max])
        let versions = decoded.settledVersions
        #expect(versions.contains(0) && versions.contains(1 << 40) && versions.contains(.max))
        // One sequence short of the end: the last is missing.
        let short = try decode(withSettledBytes([1, 1] + Self.varint(.max - 2))).get().settledVersions
        #expect(!short.contains(0) && short.contains(1) && short.contains(.max - 1) && !short.contains(.max))
    }

    @Test func anyFlippedByteOrTruncationIsRejected() {
        let bytes = manifest.encoded()
        for index in bytes.indices {
            var damaged = bytes
            damaged[index] ^= 0x5A
            #expect(throws: Manifest.Damage.self) { try decode(damaged).get() }
        }
        for length in 0 ..< bytes.count {
            #expect(throws: Manifest.Damage.self) { try decode(Array(bytes.prefix(length))).get() }
        }
    }

    @Test func hostileCountsDoNotAllocate() {
        // A valid checksum over a body that claims four billion key spaces.
        var writer = BinaryWriter()
        for byte in Manifest.magic { writer.write(byte) }
        writer.write(UInt64(0))
        writer.write(Manifest.version)
        writer.write(UInt16(0))
        writer.write(Int64(0))
        writer.write(UInt64(1))
        writer.write(Int64(0))
        writer.write(UInt32.max)
        var bytes = writer.bytes
        let checksum = bytes.withUnsafeBytes { XXHash64.hash(UnsafeRawBufferPointer(rebasing: $0[12...])) }
        withUnsafeBytes(of: checksum.littleEndian) { for (i, b) in $0.enumerated() { bytes[4 + i] = b } }
        #expect(throws: Manifest.Damage.malformed) { try decode(bytes).get() }
    }
}
