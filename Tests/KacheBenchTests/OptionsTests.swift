import Testing
@testable import KacheBench

@Suite("kache-bench run options")
struct OptionsTests {
    @Test func workloadsAreParsedInWorkloadOrderWhateverTheOrderGiven() throws {
        #expect(WorkloadSelection(argument: "W3,w1")?.workloads == [.w1, .w3])
        #expect(WorkloadSelection(argument: "all")?.workloads.count == 7)
        #expect(WorkloadSelection(argument: "W2, W2")?.workloads == [.w2])
        #expect(WorkloadSelection(argument: "W8") == nil)
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
        #expect(options.workloads.workloads.count == 7)
        #expect(options.threads.counts == [1])
        #expect(options.durability.modes == [.async])
        #expect(options.runs == 3)
        #expect(options.dir == nil && options.json == nil && !options.quick && !options.quiet)
        #expect(options.sizes == .standard)
        #expect(try RunOptions.parse(["--quick"]).sizes == .quick)
    }

    @Test func zeroRunsAreRefused() {
        #expect(throws: (any Error).self) { try RunOptions.parse(["--runs", "0"]) }
    }
}
