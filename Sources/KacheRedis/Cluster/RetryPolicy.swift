/// How hard one call tries before it gives up: a bound on attempts and on
/// the time spent, whichever comes first.
///
/// A cache `get` wants a short one (a slow shared tier must not be slower
/// than a miss); a write that is required wants a long one.
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in all, the first included.
    public var maximumAttempts: Int
    /// Time from the first attempt after which no new attempt starts.
    public var budget: Duration

    /// Creates a policy.
    public init(maximumAttempts: Int, budget: Duration) {
        self.maximumAttempts = max(maximumAttempts, 1)
        self.budget = budget
    }
}
