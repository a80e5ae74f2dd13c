import Testing
@testable import KacheBench

@Suite("kache-bench run options")
struct OptionsTests {
    @Test func workloadsAreParsedInWorkloadOrderWhateverTheOrderGiven() throws {
        #expect(WorkloadSelection(argument: "W3,w1")?.workloads == [.w1, .w3])
        #expect(WorkloadSelection(argument: "all")?.workloads.count == 10)
        #expect(WorkloadSelection(argument: "W2, W2")?.workloads == [.w2])
        #expect(WorkloadSelection(argument: "w4d,W8,W4")?.workloads == [.w4, .w8, .w4d], "in WORKLOADS.md's order, in any case")
        #expect(WorkloadSelection(argument: "w9")?.workloads == [.w9])
        #expect(WorkloadSelection(argument: "W10") == nil)
        #expect(WorkloadSelection(argument: "") == nil)
    }

    @Test func threadCountsAreAscendingAndPositive() {
        #expect(ThreadCounts(argument: "2,1,2")?.counts == [1, 2])
        #expect(ThreadCounts(argument: "0") == nil)
        #expect(ThreadCounts(argument: "two") == nil)
    }

    @Test func durabilityModesKeepTheirOrder() {
        #expect(DurabilitySelection(argument: "sync,async")?.modes == [.sync, .async])
        #expect(DurabilitySelection(argument: "FSYNC")?.modes == [.fsync])
        #expect(DurabilitySelection(argument: "disk") == nil)
    }

    @Test func defaultsAreEveryWorkloadOneThreadAsyncThreeRuns() throws {
        let options = try RunOptions.parse([])
        #expect(options.workloads.workloads.count == 10)
        #expect(options.segmentThreshold == nil, "Kache's own default")
        #expect(options.threads.counts == [1])
        #expect(options.durability.modes == [.async])
        #expect(options.runs == 3)
        #expect(options.dir == nil && options.json == nil && !options.quick && !options.quiet)
        #expect(options.sizes == .standard)
        #expect(try RunOptions.parse(["--quick"]).sizes == .quick)
    }

    @Test func segmentThresholdReachesEveryConfiguration() throws {
        let options = try RunOptions.parse(["--segment-threshold", "0"])
        #expect(options.segmentThreshold == 0)
        #expect(throws: (any Error).self) { try RunOptions.parse(["--segment-threshold", "-1"]) }
    }

    @Test func peersRunUnlessTurnedOff() throws {
        #expect(try RunOptions.parse([]).peers)
        #expect(try !RunOptions.parse(["--no-peers"]).peers)
        #expect(try RunOptions.parse(["--peers"]).peers)
    }

    @Test func zeroRunsAreRefused() {
        #expect(throws: (any Error).self) { try RunOptions.parse(["--runs", "0"]) }
    }
}
