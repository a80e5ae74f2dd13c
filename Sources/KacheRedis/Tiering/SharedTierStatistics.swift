/// Counts of what a ``TieredCache`` did with its shared tier, since it opened.
public struct SharedTierStatistics: Sendable, Equatable {
    /// Gets answered by the local tier.
    public var localHits = 0
    /// Gets the local tier missed and Redis answered (the local tier was filled).
    public var sharedHits = 0
    /// Gets neither tier answered.
    public var misses = 0
    /// Gets that could not ask Redis (down, slow, failing over) and answered from the local tier alone.
    public var readErrors = 0
    /// Writes (sets, removals) Redis did not take.
    public var writeErrors = 0
    /// Records from Redis that did not decode, or held another key: read as misses.
    public var damagedRecords = 0
    /// Invalidation messages received.
    public var invalidationsReceived = 0
    /// Local copies dropped because the key changed elsewhere.
    public var localCopiesDropped = 0
    /// Invalidations of this instance's own writes that were checked against
    /// Redis: the local copy stayed if Redis still held that very record.
    public var ownWritesChecked = 0
    /// Times the whole local tier was emptied because a Redis node reported a
    /// flush (`FLUSHALL`, `FLUSHDB`).
    public var localFlushes = 0
    /// Times tracking resumed for slots whose invalidations may have been
    /// missed (a tracking connection was lost, or a new master appeared).
    public var trackingGaps = 0
    /// Local copies dropped when tracking resumed, because their keys' slots
    /// were in a gap; copies of other slots stayed.
    public var localCopiesDroppedAfterGaps = 0
}
