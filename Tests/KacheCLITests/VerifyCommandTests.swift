import Foundation
import Kache
import Testing

@Suite struct VerifyCommandTests {
    /// A closed directory of six top-level entries and a Pool of two.
    static func healthyDirectory() throws -> CacheDirectoryFixture {
        let fixture = CacheDirectoryFixture()
        try fixture.fill { cache in
            for index in 0 ..< 6 { try cache.set(compressible(2000, seed: index), forKey: "k\(index)", ttl: .seconds(3600)) }
            let pool = try cache.pool(named: "icons", capacity: 4)
            try pool.set(Data("i1".utf8), forKey: "i1", ttl: .seconds(3600))
            try pool.set(Data("i2".utf8), forKey: "i2", ttl: .seconds(3600))
        }
        return fixture
    }

    @Test func healthyDirectoryPasses() throws {
        let fixture = try Self.healthyDirectory()
        let outcome = try KacheProcess.run(["verify", fixture.path])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.output.contains("Checked 8 entry files"))
        #expect(outcome.output.contains("manifest current"))
        #expect(outcome.output.contains("All is well."))
        #expect(outcome.stderr.isEmpty)
    }

    @Test func findsABitFlipAndATruncatedFile() throws {
        let fixture = try Self.healthyDirectory()
        let flipped = try fixture.entryFile(key: "k2")
        let truncated = try fixture.entryFile(key: "i1", space: "icons")
        // The header of a flipped payload still reads well: only the checksum catches it.
        try fixture.flipBit(in: flipped, fromEnd: 10)
        try fixture.truncate(truncated, to: 52)
        let inspect = try KacheProcess.run(["inspect", fixture.path, "--json"])
        #expect(try inspect.decoded(InspectJSON.self).summary.damagedFiles.map(\.file) == [relative(truncated, in: fixture)])

        let outcome = try KacheProcess.run(["verify", fixture.path])
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.stderr == "kache: found 2 problems in \(fixture.path)\n")
        let flippedLine = outcome.output.split(separator: "\n").first { $0.contains(relative(flipped, in: fixture)) }
        let truncatedLine = outcome.output.split(separator: "\n").first { $0.contains(relative(truncated, in: fixture)) }
        #expect(flippedLine?.contains("checksum mismatch") == true, "\(outcome)")
        #expect(truncatedLine?.contains("length 52 bytes, header says 57") == true, "\(outcome)")
        #expect(outcome.output.contains("kache verify --repair"))

        let json = try KacheProcess.run(["verify", fixture.path, "--json"])
        #expect(json.status == 1)
        let verification = try json.decoded(CacheDirectory.Verification.self)
        #expect(verification.problems.map(\.kind) == [.damagedFile, .damagedFile])
        #expect(Set(verification.problems.map(\.file)) == [relative(flipped, in: fixture), relative(truncated, in: fixture)])
        #expect(verification.filesChecked == 8)
    }

    @Test func repairQuarantinesDamagedFilesAndRewritesTheManifest() throws {
        let fixture = try Self.healthyDirectory()
        let flipped = try fixture.entryFile(key: "k2")
        try fixture.flipBit(in: flipped)
        try fixture.truncate(try fixture.entryFile(key: "k4"), to: 10)

        let repair = try KacheProcess.run(["verify", fixture.path, "--repair"])
        #expect(repair.status == 1, "\(repair)")
        #expect(repair.stderr == "kache: found 2 problems in \(fixture.path); repaired\n")
        #expect(repair.output.contains("Repaired: moved 2 files to quarantine/ and rewrote the manifest (6 entries)."))
        #expect(fixture.files(in: "quarantine").count == 2)

        let again = try KacheProcess.run(["verify", fixture.path])
        #expect(again.status == 0, "\(again)")
        let summary = try KacheProcess.run(["inspect", fixture.path, "--json"]).decoded(InspectJSON.self).summary
        #expect(summary.entries == 6)
        #expect(summary.quarantinedFiles == 2)
        #expect(summary.keySpaces.first { $0.name == "icons" }?.capacity == 4, "the Pool keeps its saved capacity")

        let cache = try fixture.open()
        #expect(cache.data(forKey: "k2") == nil)
        #expect(cache.data(forKey: "k4") == nil)
        #expect(cache.data(forKey: "k5") == compressible(2000, seed: 5))
        #expect(try cache.pool(named: "icons", capacity: 4).data(forKey: "i2") == Data("i2".utf8))
        try cache.close()
    }

    @Test func repairOfAHealthyDirectoryChangesNothing() throws {
        let fixture = try Self.healthyDirectory()
        let before = fixture.snapshot()
        let outcome = try KacheProcess.run(["verify", fixture.path, "--repair"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(fixture.snapshot() == before)
    }

    @Test func repairWaitsForTheWriterToLetGo() throws {
        let fixture = try Self.healthyDirectory()
        try fixture.flipBit(in: try fixture.entryFile(key: "k1"))
        let cache = try fixture.open()
        let outcome = try KacheProcess.run(["verify", fixture.path, "--repair"])
        expectFailure(outcome, status: 5, message: "\(fixture.path) is locked by process \(getpid())")
        try cache.close()
    }

    @Test func damagedManifestIsFoundAndRebuilt() throws {
        let fixture = try Self.healthyDirectory()
        try fixture.flipBit(in: fixture.url.appendingPathComponent("manifest").path, fromEnd: 3)

        let outcome = try KacheProcess.run(["verify", fixture.path])
        #expect(outcome.status == 1, "\(outcome)")
        #expect(outcome.output.contains("damaged-manifest"))
        #expect(outcome.output.contains("manifest checksum mismatch"))

        let repair = try KacheProcess.run(["verify", fixture.path, "--repair"])
        #expect(repair.status == 1, "\(repair)")
        #expect(try KacheProcess.run(["verify", fixture.path]).status == 0)
        let summary = try KacheProcess.run(["inspect", fixture.path, "--json"]).decoded(InspectJSON.self).summary
        #expect(summary.entries == 8)
        #expect(summary.manifestIsCurrent)
        #expect(summary.quarantinedFiles == 1)
    }

    private func relative(_ path: String, in fixture: CacheDirectoryFixture) -> String {
        String(path.dropFirst(fixture.path.count + 1))
    }
}
