import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

/// Hints: a segment's records without their values, read back as written;
/// a hint stops at its first bad chunk; the rebuild after a crash reads
/// hints and only what they don't list; and where a hint and its segment
/// disagree, the segment wins and the hint is rebuilt.
@Suite struct SegmentHintTests {
    /// Two blocks' records, as a segment holds them from `start`, and where they end.
    static func records(start: Int, seed: Int) -> (records: [SegmentStore.ScannedRecord], end: Int, lastBlockChecksum: UInt64) {
        var records: [SegmentStore.ScannedRecord] = []
        var offset = start
        var checksum: UInt64 = 0
        for block in 0 ..< 2 {
            var builder = SegmentBlock.Builder()
            let written = (0 ..< 5).map { i in
                SegmentBlock.Record(
                    key: "k\(seed)-\(block)-\(i)", space: i == 3 ? "pool" : "", kind: i == 3 ? 1 : 0,
                    expiry: 1_800_000_000_000_000_000 + Int64(i * 977), sequence: UInt64(seed * 100 + block * 10 + i),
                    isTombstone: i == 4, value: i == 4 ? Data() : compressible(100 + i, seed: seed + i)
                )
            }
            for record in written { builder.append(record) }
            let (bytes, shares) = builder.seal()
            // What a scan of the segment finds is what the hint must list.
            for (index, found) in SegmentStore.scan(bytes).records.enumerated() {
                #expect(found.length == shares[index])
                records.append(SegmentStore.ScannedRecord(header: found.header, offset: offset, index: index, length: found.length))
            }
            checksum = bytes.withUnsafeBytes { SegmentHint.blockChecksum($0) }
            offset += bytes.count
        }
        return (records, offset, checksum)
    }

    @Test func chunksReadBackAsTheyWereWritten() {
        let (first, middle, firstChecksum) = Self.records(start: 0, seed: 1)
        let (second, end, secondChecksum) = Self.records(start: middle, seed: 2)
        let hint = SegmentHint.chunk(first, covering: 0 ..< middle, lastBlockChecksum: firstChecksum)
            + SegmentHint.chunk(second, covering: middle ..< end, lastBlockChecksum: secondChecksum)
        var records: [SegmentStore.ScannedRecord] = []
        let (chunks, validLength) = SegmentHint.decode(hint, into: &records)
        #expect(chunks.map(\.covering) == [0 ..< middle, middle ..< end])
        #expect(chunks.map { Array(records[$0.records]) } == [first, second])
        #expect(chunks.map(\.lastBlock.checksum) == [firstChecksum, secondChecksum])
        #expect(chunks.map(\.lastBlock.offset) == [first.last!.offset, second.last!.offset])
        #expect(validLength == hint.count)
    }

    @Test func aHintStopsAtItsFirstBadChunk() {
        let (first, middle, firstChecksum) = Self.records(start: 0, seed: 1)
        let (second, end, secondChecksum) = Self.records(start: middle, seed: 2)
        let one = SegmentHint.chunk(first, covering: 0 ..< middle, lastBlockChecksum: firstChecksum)
        let two = SegmentHint.chunk(second, covering: middle ..< end, lastBlockChecksum: secondChecksum)
        // Torn anywhere in the second chunk: the first stands.
        for cut in [1, SegmentHint.headerSize, two.count - 1] {
            var records: [SegmentStore.ScannedRecord] = []
            let (chunks, validLength) = SegmentHint.decode(one + two.prefix(cut), into: &records)
            #expect(chunks.map(\.covering) == [0 ..< middle] && validLength == one.count, "cut at \(cut)")
            #expect(records == first, "only the first chunk's records, cut at \(cut)")
        }
        // Every flipped bit in the first chunk ends the hint before it.
        for position in 0 ..< one.count {
            var damaged = one + two
            damaged[position] ^= 0x20
            var records: [SegmentStore.ScannedRecord] = []
            #expect(SegmentHint.decode(damaged, into: &records).chunks.isEmpty && records.isEmpty, "a flipped bit at byte \(position)")
        }
        // A chunk that does not start where the one before ended is not read: a gap would hide records.
        let (later, laterEnd, laterChecksum) = Self.records(start: end, seed: 3)
        let gap = SegmentHint.chunk(later, covering: end ..< laterEnd, lastBlockChecksum: laterChecksum)
        var records: [SegmentStore.ScannedRecord] = []
        #expect(SegmentHint.decode(one + gap, into: &records).chunks.count == 1 && records == first)
    }

    // MARK: - Hints in a cache directory

    static let count = 6_000

    /// A directory of `count` small entries written in `async` (blocks of
    /// many records, chunks of hints written as they gathered) and closed;
    /// two lifetimes, so two segment files at least.
    static func writtenDirectory(_ label: String = #function) throws -> TemporaryDirectory {
        let dir = TemporaryDirectory(label)
        let cache = try Kache(directory: dir.url, configuration: .testing(.async))
        for i in 0 ..< count { try cache.set(compressible(150, seed: i), forKey: "k\(i)", ttl: .seconds(i % 2 == 0 ? 3600 : 600)) }
        try cache.close()
        return dir
    }

    /// The segment files of `dir`, opened as the writer opens them.
    static func segments(of dir: TemporaryDirectory) throws -> (store: SegmentStore, files: [SegmentStore.SegmentFile]) {
        let store = SegmentStore(folder: dir.url.appendingPathComponent("segments").path, maximumLength: 8 << 20, syncsEveryWrite: false)
        let files = try store.openExisting().compactMap { store.file($0) }
        return (store, files)
    }

    /// What reading the whole segment finds.
    static func fullScan(_ file: SegmentStore.SegmentFile) throws -> [SegmentStore.ScannedRecord] {
        SegmentStore.scan(try #require(file.read(offset: 0, length: file.length))).records
    }

    /// Marks the directory as a crash leaves it: the next open rebuilds the index from the records.
    static func markDirty(_ dir: TemporaryDirectory) {
        #expect(FileManager.default.createFile(atPath: dir.url.appendingPathComponent("dirty").path, contents: nil))
    }

    @Test func hintsListEverySegmentRecordAndTheRebuildReadsThem() throws {
        let dir = try Self.writtenDirectory()
        let (store, files) = try Self.segments(of: dir)
        #expect(!files.isEmpty)
        for file in files {
            let read = try store.scan(file, length: file.length, rebuildingHint: false)
            #expect(read.hintedLength == file.length, "the hint lists the whole of segment \(file.id)")
            #expect(!read.hintDisagreed)
            #expect(read.scan.records == (try Self.fullScan(file)))
        }
        Self.markDirty(dir)
        let cache = try Kache(directory: dir.url, configuration: .testing(.async))
        #expect((0 ..< Self.count).allSatisfy { cache.data(forKey: "k\($0)") == compressible(150, seed: $0) })
        cache.checkInvariants()
    }

    enum Disagreement: CaseIterable, Sendable {
        /// A bit flipped in its first chunk.
        case flippedBit
        /// The hint of another segment file, under this one's name (as a crash
        /// between deleting a file and its hint, and a new file of that number, would leave it).
        case anotherSegmentsHint
        /// Its segment lost its last blocks (a power cut before they were synced).
        case segmentCutShort
    }

    @Test(arguments: Disagreement.allCases)
    func whereAHintDisagreesWithItsSegmentTheSegmentWinsAndTheHintIsRebuilt(_ disagreement: Disagreement) throws {
        let dir = try Self.writtenDirectory()
        do {
            let (store, files) = try Self.segments(of: dir)
            let sizes = files.map { ($0, $0.length) }.sorted { $0.1 > $1.1 }
            try #require(sizes.count >= 2)
            let (file, other) = (sizes[0].0, sizes[1].0)
            let hintURL = URL(fileURLWithPath: store.hintPath(of: file.id))
            switch disagreement {
            case .flippedBit:
                var hint = try Data(contentsOf: hintURL)
                hint[SegmentHint.headerSize + 3] ^= 0x04
                try hint.write(to: hintURL)
            case .anotherSegmentsHint:
                try Data(contentsOf: URL(fileURLWithPath: store.hintPath(of: other.id))).write(to: hintURL)
            case .segmentCutShort:
                let records = try Self.fullScan(file)
                let blocks = Array(Set(records.map(\.offset))).sorted()
                try #require(blocks.count > 4)
                #expect(ftruncate(file.descriptor, off_t(blocks[blocks.count - 3])) == 0)
            }
        }
        Self.markDirty(dir)
        let cache = try Kache(directory: dir.url, configuration: .testing(.async, memoryBudget: 0))
        // The segment's records, no more: those a cut segment lost are misses, never wrong values.
        let (store, files) = try Self.segments(of: dir)
        var onDisk = Set<String>()
        for file in files {
            for record in try Self.fullScan(file) { onDisk.insert(record.header.key) }
        }
        for i in 0 ..< Self.count {
            let value = cache.data(forKey: "k\(i)")
            #expect(value == (onDisk.contains("k\(i)") ? compressible(150, seed: i) : nil), "k\(i)")
        }
        if disagreement == .segmentCutShort { #expect(onDisk.count < Self.count) } else { #expect(onDisk.count == Self.count) }
        cache.checkInvariants()
        // The open rebuilt the hint: it lists the whole segment again.
        for file in files {
            let read = try store.scan(file, length: file.length, rebuildingHint: false)
            #expect(read.hintedLength == file.length && !read.hintDisagreed, "segment \(file.id)")
            #expect(read.scan.records == (try Self.fullScan(file)))
        }
        try cache.close()
    }

    @Test func aHintGoesWithItsSegment() throws {
        let dir = try Self.writtenDirectory()
        let hints = { dir.files(in: "segments").filter { SegmentStore.id(ofHintFileName: $0) != nil } }
        let segments = { dir.files(in: "segments").filter { SegmentStore.id(ofFileName: $0) != nil } }
        #expect(Set(hints().map { $0.dropLast(5) }) == Set(segments().map { $0.dropLast(4) }))
        // A hint whose segment is gone is deleted at open.
        let orphan = dir.url.appendingPathComponent("segments/\(SegmentStore.hintFileName(0xABCD))")
        #expect(FileManager.default.createFile(atPath: orphan.path, contents: Data("stale".utf8)))
        let clock = ManualClock()
        let cache = try Kache(directory: dir.url, configuration: .testing(.async, clock: clock))
        #expect(!FileManager.default.fileExists(atPath: orphan.path))
        // Every entry expires; the checkpoint then lets their segments, and the hints with them, go.
        clock.advance(by: .seconds(7200))
        try cache.set(Data("fresh".utf8), forKey: "fresh", ttl: .seconds(60))
        try cache.save()
        try cache.save()
        #expect(Set(hints().map { $0.dropLast(5) }).isSubset(of: Set(segments().map { $0.dropLast(4) })))
        #expect(segments().count <= 2)
        try cache.close()
    }
}
