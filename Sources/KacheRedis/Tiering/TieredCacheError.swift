import Kache

/// Why a ``TieredCache`` write failed.
public enum TieredCacheError: Error, Sendable, CustomStringConvertible {
    /// The local tier refused the value (bad key, TTL, size, disk).
    case local(any Error)
    /// Redis did not take the write, and the configuration requires it to.
    case sharedTier(RedisClientError)

    /// The error as a sentence.
    public var description: String {
        switch self {
        case let .local(error): return "the local tier refused the write: \(error)"
        case let .sharedTier(error): return "the shared tier did not take the write: \(error)"
        }
    }
}
