import KacheWorkloads
import Testing

@Suite struct WorkloadIDTests {
    @Test func everyWorkloadIsDescribedWithItsFigure() {
        #expect(WorkloadID.allCases.map(\.rawValue) == ["W1", "W2", "W3", "W4", "W5", "W6", "W7", "W8", "W4d", "W9"])
        for workload in WorkloadID.allCases {
            #expect(!workload.name.isEmpty && !workload.figure.isEmpty)
            #expect(workload.description(sizes: .quick) != workload.description(sizes: .standard))
        }
        #expect(WorkloadID.w1.description() == "set N = 100,000 1,024-byte text values, keys in index order, TTL 3,600 s")
        #expect(WorkloadID.w2.threadCounts == [1, 2] && WorkloadID.w4.threadCounts == [1])
        #expect(WorkloadID.w8.description() == "set 1,000,000 text values of 200 bytes, keys in index order, "
            + "TTL uniform in [60, 3,600] s (drawn after each value); save, close, reopen, then get every 100th key")
        #expect(WorkloadID.w4d.description().contains("capacity 10,000") && WorkloadID.w4d.description().contains("disk mode"))
    }

    @Test func quickSizesAreAboutTwentyTimesSmaller() {
        let standard = WorkloadSizes.standard, quick = WorkloadSizes.quick
        let pairs = [
            (standard.keyCount, quick.keyCount), (standard.readOps, quick.readOps),
            (standard.mixedOps, quick.mixedOps), (standard.churnOps, quick.churnOps),
            (standard.churnKeyCount, quick.churnKeyCount), (standard.churnCapacity, quick.churnCapacity),
            (standard.blobCount, quick.blobCount), (standard.blobGets, quick.blobGets),
            (standard.queuePushes, quick.queuePushes), (standard.queueCapacity, quick.queueCapacity),
            (standard.manySmallCount, quick.manySmallCount), (standard.hitRatioRequests, quick.hitRatioRequests),
        ]
        for (full, small) in pairs { #expect(full == 20 * small) }
        #expect(quick.textValueBytes == standard.textValueBytes && quick.blobBytes == standard.blobBytes)
        #expect(quick.manySmallValueBytes == standard.manySmallValueBytes && quick.manySmallReadStride == standard.manySmallReadStride)
        #expect(standard.manySmallCount == 1_000_000 && standard.manySmallValueBytes == 200 && standard.manySmallReadStride == 100)
    }
}
