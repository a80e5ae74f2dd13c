import Foundation
import KacheWorkloads
import Testing

/// What the vectors cannot show: how many draws each generator makes (the
/// next operation starts where it stopped), and the edges of each generator.
@Suite struct WorkloadGeneratorTests {
    /// How many values `body` draws from a fresh seed-42 stream.
    private func drawCount(_ body: (inout SplitMix64) -> Void) -> Int {
        var used = SplitMix64(seed: 42)
        body(&used)
        var fresh = SplitMix64(seed: 42)
        var count = 0
        while fresh.state != used.state {
            _ = fresh.next()
            count += 1
        }
        return count
    }

    @Test func eachThreadHasItsOwnStreamSeededWithSeedPlusIndex() {
        var second = SplitMix64(seed: 42, thread: 1)
        var plain = SplitMix64(seed: 43)
        #expect(second.next() == plain.next())
    }

    @Test func textValueDrawsOncePerRepetitionBegunEvenIfCutBeforeTheScore() {
        // The vector's value: 14 whole repetitions fill 1,005 bytes; the 15th is cut
        // after `{"id":0,"name":"use`, before its score, and still draws it.
        #expect(drawCount { _ = WorkloadValues.text(index: 0, byteCount: 1024, using: &$0) } == 15)
        #expect(drawCount { _ = WorkloadValues.text(index: 0, byteCount: 0, using: &$0) } == 0)
        #expect(drawCount { _ = WorkloadValues.text(index: 0, byteCount: 1, using: &$0) } == 1)
    }

    @Test func textValueIsCutAtItsSizeAndRepeatsThePattern() throws {
        var rng = SplitMix64(seed: 1)
        let value = WorkloadValues.text(index: 123, byteCount: 256, using: &rng)
        #expect(value.count == 256)
        let text = String(decoding: value, as: UTF8.self)
        #expect(text.hasPrefix(#"{"id":123,"name":"user-123","active":true,"score":"#))
        #expect(text.contains(#","tags":["a","b","c"]},{"id":123,"#))
    }

    @Test func blobDrawsOneValuePerEightBytesRoundedUp() {
        #expect(drawCount { _ = WorkloadValues.blob(byteCount: 1024, using: &$0) } == 128)
        #expect(drawCount { _ = WorkloadValues.blob(byteCount: 1001, using: &$0) } == 126)
        #expect(drawCount { _ = WorkloadValues.blob(byteCount: 0, using: &$0) } == 0)
    }

    @Test func blobOfOddSizeIsAPrefixOfTheLongerBlob() {
        var short = SplitMix64(seed: 3)
        var long = SplitMix64(seed: 3)
        let cut = WorkloadValues.blob(byteCount: 13, using: &short)
        #expect(cut == WorkloadValues.blob(byteCount: 16, using: &long).prefix(13))
    }

    @Test func keysAreSevenZeroPaddedDigits() {
        #expect(WorkloadKeys.key(7) == "key-0000007")
        #expect(WorkloadKeys.key(9_999_999) == "key-9999999")
        #expect(WorkloadKeys.keys(count: 3) == ["key-0000000", "key-0000001", "key-0000002"])
    }

    @Test func zipfTableRisesToOneAndDrawsOncePerSample() {
        let zipf = ZipfDistribution(count: 1_000)
        #expect(zipf.cdf.last == 1.0)
        #expect(zip(zipf.cdf, zipf.cdf.dropFirst()).allSatisfy { $0 < $1 })
        #expect(drawCount { _ = zipf.sample(&$0) } == 1)
    }

    @Test func zipfRanksStayInRangeAndFavourRankZero() {
        let zipf = ZipfDistribution(count: 100)
        var rng = SplitMix64(seed: 11)
        var hits = [Int](repeating: 0, count: 100)
        for _ in 0..<10_000 { hits[zipf.sample(&rng)] += 1 }
        #expect(hits.max() == hits[0])
        #expect(ZipfDistribution(count: 1).sample(&rng) == 0)
    }

    @Test func manySmallTTLIsSixtyPlusTheDrawModuloItsRange() {
        var rng = SplitMix64(seed: 42)
        var copy = rng
        #expect(WorkloadDraws.manySmallTTLSeconds(&rng) == Int64(60 + copy.next() % 3541))
        #expect(drawCount { _ = WorkloadDraws.manySmallTTLSeconds(&$0) } == 1)
        var many = SplitMix64(seed: 7)
        let ttls = (0..<10_000).map { _ in WorkloadDraws.manySmallTTLSeconds(&many) }
        #expect(ttls.allSatisfy { (60...3600).contains($0) })
        #expect(ttls.min()! < 120 && ttls.max()! > 3540, "the draws span the range")
    }

    /// W8 as WORKLOADS.md defines it: keys in index order, and from one
    /// stream, for each set the value's bytes and then the TTL.
    @Test func manySmallSetsDrawEachValueThenItsTTL() {
        let sets = ManySmallSets(count: 300, valueBytes: 200, seed: 42)
        var rng = SplitMix64(seed: 42)
        for index in 0..<300 {
            #expect(sets.keys[index] == WorkloadKeys.key(index))
            #expect(sets.values[index] == WorkloadValues.text(index: index, byteCount: 200, using: &rng), "value \(index)")
            #expect(sets.ttlSeconds[index] == Int64(60 + rng.next() % 3541), "TTL \(index)")
        }
        #expect(sets.rawBytes == 300 * 200)
        #expect(ManySmallSets(count: 2, valueBytes: 200, seed: 43).values[0] != sets.values[0], "the seed chooses the stream")
    }

    @Test func perOperationDrawsFollowTheSpecification() {
        var rng = SplitMix64(seed: 42)
        var copy = rng
        #expect(WorkloadDraws.isGet(&rng) == (copy.next() % 100 < 90))
        #expect(WorkloadDraws.randomTTLSeconds(&rng) == Int64(1 + copy.next() % 600))
    }
}
