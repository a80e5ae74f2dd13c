import Testing
@testable import KacheBench

@Suite("Figures, their summaries and how they print")
struct StatisticsAndFormatTests {
    @Test func medianOfAnOddCountIsTheMiddleSample() throws {
        let statistics = try #require(SampleStatistics([5, 1, 3]))
        #expect(statistics == SampleStatistics([1, 3, 5]))
        #expect((statistics.median, statistics.min, statistics.max) == (3, 1, 5))
    }

    @Test func medianOfAnEvenCountIsTheMeanOfTheMiddleTwo() throws {
        #expect(try #require(SampleStatistics([4, 1, 2, 10])).median == 3)
        #expect(SampleStatistics([]) == nil)
    }

    @Test func ratiosArePairedRunByRun() {
        var recorder = FigureRecorder()
        recorder.record("gets/s", 100, unit: .perSecond)
        recorder.compare("gets/s", with: "floor", 200)
        recorder.record("gets/s", 300, unit: .perSecond)
        recorder.compare("gets/s", with: "floor", 0)
        recorder.record("gets/s", 90, unit: .perSecond)
        recorder.compare("gets/s", with: "floor", 100)
        let figure = recorder.figures[0]
        #expect(figure.samples == [100, 300, 90])
        #expect(figure.ratios(to: figure.comparisons[0]) == [0.5, 0.9], "a zero baseline gives no ratio")
    }

    @Test func numbersPrintWithThreeSignificantDigits() {
        #expect(Format.rate(3_120_000) == "3.12 M")
        #expect(Format.rate(812_400) == "812 k")
        #expect(Format.rate(950) == "950")
        #expect(Format.ratio(0.8734) == "0.873×")
        #expect(Format.bytes(1_073_741_824) == "1 GiB")
        #expect(Format.bytes(1536) == "1.50 KiB")
        #expect(Format.bytes(500) == "500 B")
        #expect(Format.grouped(1_000_000) == "1,000,000")
        #expect(Format.summary(SampleStatistics([1.5, 2.5, 2])!, unit: .milliseconds) == "2.00 ms (1.50 ms–2.50 ms)")
        #expect(Format.summary(SampleStatistics([0, 0])!, unit: .count) == "0")
    }
}
