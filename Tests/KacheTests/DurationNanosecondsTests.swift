@testable import Kache
import Testing

@Suite struct DurationNanosecondsTests {
    /// Whole nanoseconds, the fraction dropped toward zero on either side,
    /// and the longest and most negative durations clamped, not trapped.
    @Test func nanosecondsAreWholeAndSaturate() {
        #expect(Duration.seconds(3600).saturatingNanoseconds == 3_600_000_000_000)
        #expect(Duration.milliseconds(-5).saturatingNanoseconds == -5_000_000)
        #expect((Duration.seconds(1) + .nanoseconds(1)).saturatingNanoseconds == 1_000_000_001)
        #expect((Duration.seconds(-1) - .nanoseconds(7)).saturatingNanoseconds == -1_000_000_007)
        // 1.5 ns and -1.5 ns: the half nanosecond is dropped, toward zero.
        #expect(Duration(secondsComponent: 0, attosecondsComponent: 1_500_000_000).saturatingNanoseconds == 1)
        #expect(Duration(secondsComponent: 0, attosecondsComponent: -1_500_000_000).saturatingNanoseconds == -1)
        #expect(Duration.seconds(Int64.max).saturatingNanoseconds == .max)
        #expect(Duration.seconds(Int64.min).saturatingNanoseconds == .min)
        #expect(Duration.seconds(9_223_372_036).saturatingNanoseconds == 9_223_372_036_000_000_000)
        #expect(Duration.seconds(9_223_372_037).saturatingNanoseconds == .max)
    }
}
