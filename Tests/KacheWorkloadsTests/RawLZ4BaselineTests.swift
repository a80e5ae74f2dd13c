import Foundation
import KacheWorkloads
import Testing

@Suite struct RawLZ4BaselineTests {
    private func textValue() -> Data {
        var rng = SplitMix64(seed: 42)
        return WorkloadValues.text(index: 0, byteCount: 1024, using: &rng)
    }

    @Test func textValueRoundTripsAndShrinksAboutSixfold() {
        let value = textValue()
        let packed = RawLZ4Baseline.compress(value)
        // WORKLOADS.md measured 1,024 → 163 bytes; allow for other liblz4 versions.
        #expect(packed.count < value.count / 5)
        #expect(RawLZ4Baseline.decompress(packed, rawCount: value.count) == value)
    }

    @Test func blobRoundTripsWithinTheBound() {
        var rng = SplitMix64(seed: 42)
        let blob = WorkloadValues.blob(byteCount: 4096, using: &rng)
        let packed = RawLZ4Baseline.compress(blob)
        #expect(packed.count >= blob.count)   // random bytes never shrink
        #expect(RawLZ4Baseline.decompress(packed, rawCount: blob.count) == blob)
    }

    @Test func emptyInputRoundTrips() {
        let packed = RawLZ4Baseline.compress(Data())
        #expect(RawLZ4Baseline.decompress(packed, rawCount: 0).isEmpty)
    }

    @Test func inPlaceCallsReuseOneBufferAndAgreeWithTheCopyingOnes() {
        let value = textValue()
        var lz4 = RawLZ4Baseline(maxRawCount: value.count)
        let capacity = lz4.buffer.count
        let packedCount = lz4.compressInPlace(value)
        let packed = Data(lz4.output)
        #expect(packed == RawLZ4Baseline.compress(value) && packedCount == packed.count)
        #expect(lz4.decompressInPlace(packed, rawCount: value.count) == value.count)
        #expect(Data(lz4.output) == value)
        #expect(lz4.compressInPlace(value) == packedCount && lz4.buffer.count == capacity)
    }

    /// Copies of one baseline compress on several threads at once: each copy
    /// gets an encoder state of its own before it uses one.
    @Test func copiesCompressingAtOnceOnManyThreadsEachDecodeTheirOwn() async {
        var rng = SplitMix64(seed: 7)
        let values = (0..<64).map { WorkloadValues.text(index: $0, byteCount: 200 + $0 * 13, using: &rng) }
        let original = RawLZ4Baseline(maxRawCount: values.map(\.count).max()!)
        let failures = await withTaskGroup(of: Int.self) { group in
            for task in 0..<4 {
                group.addTask {
                    var lz4 = original
                    var failures = 0
                    for round in 0..<50 {
                        let value = values[(task * 17 + round) % values.count]
                        _ = lz4.compressInPlace(value)
                        if RawLZ4Baseline.decompress(Data(lz4.output), rawCount: value.count) != value { failures += 1 }
                    }
                    return failures
                }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
    }
}
