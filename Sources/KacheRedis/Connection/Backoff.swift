/// Exponential back-off with full jitter: the n-th consecutive failure waits
/// a random time up to `base × 2ⁿ`, capped at `maximum`, so that clients that
/// lost a node together do not reconnect in lockstep.
public struct Backoff: Sendable, Equatable {
    /// The first delay's upper bound.
    public var base: Duration
    /// The longest delay.
    public var maximum: Duration

    /// Creates a back-off.
    public init(base: Duration = .milliseconds(20), maximum: Duration = .seconds(1)) {
        self.base = base
        self.maximum = maximum
    }

    /// The delay after `failures` consecutive failures (1 for the first).
    public func delay(afterFailures failures: Int) -> Duration {
        let exponent = min(max(failures - 1, 0), 20)
        let ceiling = min(base.nanoseconds.multipliedReportingOverflow(by: 1 << exponent).partialValue, maximum.nanoseconds)
        guard ceiling > 0 else { return .zero }
        return .nanoseconds(Int64.random(in: ceiling / 2...ceiling))
    }
}
