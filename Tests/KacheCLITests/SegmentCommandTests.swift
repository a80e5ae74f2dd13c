import Foundation
import Kache
import Testing

/// The `kache` tools on a directory whose small entries are in segment files.
@Suite struct SegmentCommandTests {
    /// A closed directory of 40 small top-level entries (in segments), one
    /// large one (in a file of its own) and a Pool of two.
    static func segmentedDirectory() throws -> CacheDirectoryFixture {
        let fixture = CacheDirectoryFixture()
        try fixture.fill(segmentThreshold: 16 << 10) { cache in
            for index in 0 ..< 40 { try cache.set(compressible(2000, seed: index), forKey: "k\(index)", ttl: .seconds(3600)) }
            // Bytes LZ4 can't shrink: its record is past the threshold.
            var generator = SystemRandomNumberGenerator()
            try cache.set(Data((0 ..< 40_000).map { _ in UInt8.random(in: 0 ... 255, using: &generator) }), forKey: "large", ttl: .seconds(3600))
            try cache.set(Data("replaced".utf8), forKey: "k7", ttl: .seconds(3600))
            cache.removeValue(forKey: "k8")
            let pool = try cache.pool(named: "icons", capacity: 4)
            try pool.set(Data("i1".utf8), forKey: "i1", ttl: .seconds(3600))
            try pool.set(Data("i2".utf8), forKey: "i2", ttl: .seconds(3600))
        }
        return fixture
    }

    func segmentFile(_ fixture: CacheDirectoryFixture) throws -> URL {
        let folder = fixture.url.appendingPathComponent("segments")
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).filter { $0.hasSuffix(".seg") }.sorted()
        // The first file holds the top-level records written first.
        return folder.appendingPathComponent(try #require(names.first))
    }

    @Test func inspectShowsSegmentsWithTheirLiveAndDeadBytes() throws {
        let fixture = try Self.segmentedDirectory()
        let outcome = try KacheProcess.run(["inspect", fixture.path, "--json"])
        #expect(outcome.status == 0, "\(outcome)")
        let summary = try outcome.decoded(InspectJSON.self).summary
        #expect(summary.entries == 42)
        let text = try KacheProcess.run(["inspect", fixture.path])
        #expect(text.output.contains("segments"), "\(text)")
        #expect(text.output.contains("fragmentation"), "\(text)")
        let full = try CacheDirectory(url: fixture.url).inspect()
        #expect(!full.summary.segments.isEmpty)
        // The replaced k7, the removed k8 and k8's tombstone are dead.
        #expect(full.summary.deadBytes > 0)
        #expect(full.summary.segments.reduce(0) { $0 + $1.liveRecords } == 41)
        #expect(full.entries.first { $0.key == "k3" }?.offset != nil)
        #expect(full.entries.first { $0.key == "large" }?.offset == nil)
        // A record in a block is stored as its share of the block: the shares
        // of the live entries are the segments' live bytes, from the manifest
        // and from the records alike (it once counted the value's raw length
        // less a 48-byte header, and a million W8 entries "took" 17 KiB).
        let inSegments = full.entries.filter { $0.offset != nil }
        #expect(inSegments.reduce(0) { $0 + $1.storedSize } == full.summary.segments.reduce(0) { $0 + $1.liveBytes })
        #expect(inSegments.allSatisfy { $0.storedSize == $0.fileSize && $0.storedSize > 0 })
        let large = try #require(full.entries.first { $0.key == "large" })
        #expect(large.storedSize == 40_000 && large.fileSize > large.storedSize, "a file of its own: the payload, without its header")
        let read = try CacheDirectory(url: fixture.url).lookUp(key: "k3")
        guard case let .found(value, entry) = read else { Issue.record("k3 is found: \(read)"); return }
        #expect(value == compressible(2000, seed: 3))
        #expect(entry.storedSize == full.entries.first { $0.key == "k3" }?.storedSize && entry.index != nil)
    }

    @Test func getReadsARecordFromItsSegment() throws {
        let fixture = try Self.segmentedDirectory()
        let found = try KacheProcess.run(["get", fixture.path, "k3"])
        #expect(found.status == 0, "\(found)")
        #expect(found.stdout == compressible(2000, seed: 3))
        let replaced = try KacheProcess.run(["get", fixture.path, "k7"])
        #expect(replaced.stdout == Data("replaced".utf8))
        let removed = try KacheProcess.run(["get", fixture.path, "k8"])
        #expect(removed.status != 0)
    }

    @Test func verifyFindsADamagedRecordAndRepairKeepsTheOthers() throws {
        let fixture = try Self.segmentedDirectory()
        #expect(try KacheProcess.run(["verify", fixture.path]).status == 0)
        let segment = try segmentFile(fixture)
        var bytes = try Data(contentsOf: segment)
        bytes[bytes.count / 3] ^= 0x01
        try bytes.write(to: segment)

        let verify = try KacheProcess.run(["verify", fixture.path, "--json"])
        #expect(verify.status == 1, "\(verify)")
        let verification = try verify.decoded(CacheDirectory.Verification.self)
        #expect(verification.problems.contains { $0.kind == .damagedFile && $0.file.hasPrefix("segments/") })

        let repair = try KacheProcess.run(["verify", "--repair", fixture.path])
        #expect(repair.status == 0 || repair.status == 1, "\(repair)")
        let cache = try fixture.open(segmentThreshold: 16 << 10)
        defer { try? cache.close() }
        let found = (0 ..< 40).filter { $0 != 7 && $0 != 8 && cache.data(forKey: "k\($0)") == compressible(2000, seed: $0) }
        // One record lost to the flipped bit at most; no other value lost or wrong.
        #expect(found.count >= 37)
        for index in 0 ..< 40 where index != 7 && index != 8 {
            if let value = cache.data(forKey: "k\(index)") { #expect(value == compressible(2000, seed: index)) }
        }
        #expect(cache.data(forKey: "k7") == Data("replaced".utf8))
        #expect(cache.data(forKey: "k8") == nil)
        #expect(try cache.pool(named: "icons", capacity: 4).data(forKey: "i2") == Data("i2".utf8))
    }
}
