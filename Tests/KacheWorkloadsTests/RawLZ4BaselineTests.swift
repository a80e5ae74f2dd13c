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
}
