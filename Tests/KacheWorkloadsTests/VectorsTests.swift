import Foundation
import KacheWorkloads
import Testing

/// The generators against every value of shared/bench/vectors.json.
@Suite struct VectorsTests {
    /// The copy in the repository is the file WORKLOADS.md publishes, when that
    /// is at hand (in a clone beside shared/).
    @Test func theCopyMatchesSharedVectors() throws {
        guard let shared = FileManager.default.contents(atPath: Vectors.sharedURL.path) else { return }
        #expect(FileManager.default.contents(atPath: Vectors.url.path) == shared, "Tests/KacheWorkloadsTests/vectors.json differs from shared/bench/vectors.json")
    }

    @Test func vectorsAreForTheDefaultSeed() throws {
        #expect(try Vectors.load().seed == SplitMix64.defaultSeed)
    }

    @Test func splitMix64StartsWithTheVectorValues() throws {
        let vectors = try Vectors.load()
        var rng = SplitMix64(seed: vectors.seed)
        let drawn = (0..<3).map { _ in String(rng.next()) }
        #expect(drawn == vectors.splitmix64First3)
    }

    @Test func keysAreNamedAsTheVectors() throws {
        let vectors = try Vectors.load()
        #expect(WorkloadKeys.key(0) == vectors.key0)
        #expect(WorkloadKeys.key(99_999) == vectors.key99999)
    }

    @Test func textValueMatchesTheVector() throws {
        let expected = try Vectors.load().textValueIndex0Of1024
        var rng = SplitMix64(seed: SplitMix64.defaultSeed)
        let value = WorkloadValues.text(index: 0, byteCount: 1024, using: &rng)
        #expect(value.count == expected.length)
        #expect(String(decoding: value.prefix(80), as: UTF8.self) == expected.first80)
        #expect(try sha256Hex(value) == expected.sha256)
    }

    @Test func blobValueMatchesTheVector() throws {
        let expected = try Vectors.load().blobValue1024
        var rng = SplitMix64(seed: SplitMix64.defaultSeed)
        let value = WorkloadValues.blob(byteCount: 1024, using: &rng)
        #expect(value.count == 1024)
        #expect(hex(value.prefix(16)) == expected.first16Hex)
        #expect(try sha256Hex(value) == expected.sha256)
    }

    @Test func zipfRanksMatchTheVector() throws {
        let vectors = try Vectors.load()
        let zipf = ZipfDistribution(count: 100_000, exponent: 0.99)
        var rng = SplitMix64(seed: vectors.seed)
        let ranks = (0..<vectors.zipfFirst20Ranks.count).map { _ in zipf.sample(&rng) }
        #expect(ranks == vectors.zipfFirst20Ranks)
    }
}
