/// The bounds a ``RESPParser`` holds hostile or broken input to, so that no
/// byte sequence from the network can make it allocate without limit, recurse
/// without limit, or wait forever for a line that never ends.
public struct RESPLimits: Sendable, Equatable {
    /// The longest bulk string accepted (Redis's own `proto-max-bulk-len` is 512 MiB).
    public var maximumBulkLength: Int
    /// The most elements one array, set, map or push may announce.
    public var maximumAggregateCount: Int
    /// The deepest nesting of aggregates.
    public var maximumDepth: Int
    /// The longest line (simple string, error, number) before its CRLF.
    public var maximumLineLength: Int

    /// Creates limits; the defaults accept anything a Redis server sends a cache client.
    public init(
        maximumBulkLength: Int = 512 << 20,
        maximumAggregateCount: Int = 1 << 24,
        maximumDepth: Int = 32,
        maximumLineLength: Int = 64 << 10
    ) {
        self.maximumBulkLength = maximumBulkLength
        self.maximumAggregateCount = maximumAggregateCount
        self.maximumDepth = maximumDepth
        self.maximumLineLength = maximumLineLength
    }
}
