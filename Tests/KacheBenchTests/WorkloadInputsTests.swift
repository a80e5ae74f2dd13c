import Foundation
import KacheWorkloads
import Testing
@testable import KacheBench

@Suite("The inputs kache-bench generates")
struct WorkloadInputsTests {
    let inputs = WorkloadInputs(sizes: .quick, seed: 42)

    @Test func loadValuesAreDrawnInKeyOrderFromTheFirstStream() {
        var rng = SplitMix64(seed: 42, thread: 0)
        let first = WorkloadValues.text(index: 0, byteCount: 1024, using: &rng)
        let second = WorkloadValues.text(index: 1, byteCount: 1024, using: &rng)
        #expect(inputs.loadKeys.prefix(2) == ["key-0000000", "key-0000001"])
        #expect(inputs.loadValues.prefix(2) == [first, second])
        #expect(inputs.loadValues.count == 5_000)
    }

    @Test func readsAreSplitBetweenThreadsEachWithItsOwnStream() {
        let zipf = ZipfDistribution(count: 5_000)
        let keys = inputs.readKeys(threads: 2)
        #expect(keys.map(\.count) == [25_000, 25_000])
        for thread in 0..<2 {
            var rng = SplitMix64(seed: 42, thread: thread)
            let expected = (0..<10).map { _ in WorkloadKeys.key(zipf.sample(&rng)) }
            #expect(Array(keys[thread].prefix(10)) == expected, "thread \(thread)")
        }
        #expect(WorkloadInputs.share(of: 7, thread: 0, threads: 2) == 4)
        #expect(WorkloadInputs.share(of: 7, thread: 1, threads: 2) == 3)
    }

    @Test func mixedOperationsDrawKindThenKeyThenValue() throws {
        let zipf = ZipfDistribution(count: 5_000)
        let operations = try #require(inputs.mixedOperations(threads: 1).first)
        var rng = SplitMix64(seed: 42, thread: 0)
        for operation in operations.prefix(200) {
            let isGet = rng.next() % 100 < 90
            let index = zipf.sample(&rng)
            switch operation {
            case let .get(key):
                #expect(isGet && key == WorkloadKeys.key(index))
            case let .set(key, value):
                #expect(!isGet && key == WorkloadKeys.key(index))
                #expect(value == WorkloadValues.text(index: index, byteCount: 1024, using: &rng))
            }
        }
        let sets = operations.filter { if case .set = $0 { true } else { false } }.count
        #expect((4_000...6_000).contains(sets), "about 10 % of 50,000 are sets: \(sets)")
    }

    @Test func churnDrawsKeyThenTTLThenValue() {
        let operations = inputs.churnOperations()
        let zipf = ZipfDistribution(count: 50_000)
        var rng = SplitMix64(seed: 42, thread: 0)
        let index = zipf.sample(&rng)
        let ttl = Int64(1 + rng.next() % 600)
        #expect(operations.keys.first == WorkloadKeys.key(index))
        #expect(operations.ttlSeconds.first == ttl)
        #expect(operations.values.first == WorkloadValues.text(index: index, byteCount: 256, using: &rng))
        #expect(operations.keys.count == 50_000 && operations.ttlSeconds.allSatisfy { (1...600).contains($0) })
    }

    @Test func blobReadsFollowTheBlobsOnTheSameStream() {
        let operations = inputs.blobOperations()
        var rng = SplitMix64(seed: 42, thread: 0)
        for _ in 0..<100 { _ = WorkloadValues.blob(byteCount: 256 * 1024, using: &rng) }
        #expect(Array(operations.reads.prefix(5)) == (0..<5).map { _ in Int(rng.next() % 100) })
        #expect(operations.bytesSet == 100 * 256 * 1024)
        #expect(operations.reads.count == 500)
    }
}

@Suite("W8's inputs")
struct ManySmallInputsTests {
    @Test func manySmallSetsAreTheGeneratorsAtTheRunsSizes() {
        let sets = WorkloadInputs(sizes: .quick, seed: 42).manySmallSets()
        let reference = ManySmallSets(count: 50_000, valueBytes: 200, seed: 42)
        #expect(sets.keys.count == 50_000 && sets.values.allSatisfy { $0.count == 200 })
        #expect(sets.keys.first == "key-0000000" && sets.keys.last == "key-0049999")
        #expect(sets.values.prefix(100) == reference.values.prefix(100) && sets.ttlSeconds == reference.ttlSeconds)
        #expect(sets.ttlSeconds.allSatisfy { (60...3600).contains($0) })
    }
}
