import KacheWorkloads
import Testing

/// W9's traces: fixed by the seed, drawn in the row's order.
@Suite struct HitRatioTraceTests {
    @Test(arguments: HitRatioTrace.Kind.allCases)
    func sameSeedGivesSameTraceAndAnotherSeedAnother(_ kind: HitRatioTrace.Kind) {
        let first = HitRatioTrace(kind, keyCount: 1_000, requests: 5_000, seed: 7)
        let again = HitRatioTrace(kind, keyCount: 1_000, requests: 5_000, seed: 7)
        let other = HitRatioTrace(kind, keyCount: 1_000, requests: 5_000, seed: 8)
        #expect(first.keys == again.keys && first.ttlSeconds == again.ttlSeconds)
        #expect(first.keys != other.keys)
        #expect(first.count == 5_000)
    }

    @Test func zipfTraceIsTheVectorsZipfRanks() throws {
        let vectors = try Vectors.load()
        let trace = HitRatioTrace(.zipf, keyCount: 100_000, requests: 20, seed: vectors.seed)
        #expect(trace.keys.map(Int.init) == vectors.zipfFirst20Ranks)
        #expect(trace.ttlSeconds.allSatisfy { $0 == HitRatioTrace.defaultTTLSeconds })
    }

    /// The first requests of seed 42 over 100,000 keys, pinned (computed by a
    /// separate Python transcription of WORKLOADS.md's generators): a change
    /// of draw order or of a constant shows here.
    @Test func firstRequestsOfSeed42ArePinned() {
        let b = HitRatioTrace(.oneHitWonders, keyCount: 100_000, requests: 8)
        #expect(b.keys == [100_000, 18, 0, 8, 100_001, 100_002, 7, 333])
        let c = HitRatioTrace(.mixedTTL, keyCount: 100_000, requests: 8)
        #expect(c.keys == [5_041, 18, 0, 8, 39, 7, 333, 2_048])
        #expect(c.ttlSeconds == [3_600, 60, 60, 86_400, 86_400, 3_600, 3_600, 86_400])
    }

    /// (b): the kind draw first, and a fresh key draws nothing more;
    /// (c): the key, then the TTL, for every request.
    @Test func drawsFollowTheRowsOrder() {
        let zipf = ZipfDistribution(count: 500)
        var rng = SplitMix64(seed: 3)
        var keys: [Int32] = []
        var fresh: Int32 = 500
        for _ in 0..<2_000 {
            if rng.next() % 100 < 30 {
                keys.append(fresh)
                fresh += 1
            } else {
                keys.append(Int32(zipf.sample(&rng)))
            }
        }
        #expect(HitRatioTrace(.oneHitWonders, keyCount: 500, requests: 2_000, seed: 3).keys == keys)

        rng = SplitMix64(seed: 3)
        var ttls: [Int32] = []
        keys = []
        for _ in 0..<2_000 {
            keys.append(Int32(zipf.sample(&rng)))
            ttls.append([60, 3_600, 86_400][Int(rng.next() % 3)])
        }
        let c = HitRatioTrace(.mixedTTL, keyCount: 500, requests: 2_000, seed: 3)
        #expect(c.keys == keys && c.ttlSeconds == ttls)
    }

    @Test func aboutThirtyPercentOfTraceBAreFreshKeysNumberedFromN() {
        let trace = HitRatioTrace(.oneHitWonders, keyCount: 1_000, requests: 20_000)
        let fresh = trace.keys.filter { $0 >= 1_000 }
        #expect(fresh == (0..<Int32(fresh.count)).map { 1_000 + $0 }, "fresh keys are N, N+1, … in order, each once")
        #expect(abs(Double(fresh.count) / 20_000 - 0.3) < 0.01)
    }
}
