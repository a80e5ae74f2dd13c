import Synchronization

/// What the tiered cache remembers so that invalidations and its own traffic
/// never leave a stale local copy behind:
///
/// - **Own writes.** Tracking in `BCAST` mode tells an instance of its own
///   writes too. A key this instance just wrote is marked with its record's
///   checksum; the invalidation it causes is then checked against Redis
///   (same checksum: keep the local copy) instead of dropping a fresh value.
///   If another instance wrote the key in between, Redis holds another
///   checksum and the copy goes.
/// - **Fills in flight.** A `get` that fills the local tier from Redis notes
///   the epoch before it asked; if the key was invalidated after that, the
///   value it read may be stale, and the fill is undone.
/// - **Last changes.** The epoch of each key's last known change (an
///   invalidation, or this instance's own write or removal) tells the
///   ``ReplicaFence`` whether a replica may answer a read of it yet.
///
/// Both maps are bounded: past ``capacity`` entries the oldest epochs are
/// forgotten, and a fill older than what was forgotten is undone to be safe.
struct InvalidationLedger: Sendable {
    static let capacity = 8192

    /// Increments on every invalidation.
    private(set) var epoch: UInt64 = 0
    /// Epoch of each key's last invalidation.
    private var invalidated: [String: UInt64] = [:]
    /// Epochs up to this one were forgotten.
    private var forgottenThrough: UInt64 = 0
    /// Checksums of records this instance wrote and has not yet heard back about.
    private var ownWrites: [String: UInt64] = [:]

    /// Notes a write of `key` with `checksum`, before it is sent.
    mutating func noteOwnWrite(_ key: String, checksum: UInt64) {
        if ownWrites.count >= Self.capacity { ownWrites.removeAll(keepingCapacity: true) }
        ownWrites[key] = checksum
        noteChange(key)
    }

    /// Records a change of `key` by this instance (a write or removal, before
    /// it is sent and again once Redis ran it): a fill of `key` in flight is
    /// undone, and a replica must have caught up with it before it is read from.
    mutating func noteChange(_ key: String) {
        epoch += 1
        if invalidated.count >= Self.capacity {
            forgottenThrough = epoch - 1
            invalidated.removeAll(keepingCapacity: true)
        }
        invalidated[key] = epoch
    }

    /// Forgets a write that failed (no invalidation will come for it).
    mutating func forgetOwnWrite(_ key: String) {
        ownWrites[key] = nil
    }

    /// Records an invalidation of `key`; returns the checksum of this
    /// instance's own pending write of it, if there is one (consumed).
    mutating func noteInvalidation(_ key: String) -> UInt64? {
        noteChange(key)
        return ownWrites.removeValue(forKey: key)
    }

    /// Records that every key may have changed (tracking lapsed somewhere).
    /// Fills in flight are undone and replicas must catch up again: both
    /// only cost reads from Redis, so a gap on some slots is noted as one on all.
    mutating func noteEverythingInvalidated() {
        epoch += 1
        forgottenThrough = epoch
        invalidated.removeAll(keepingCapacity: true)
        ownWrites.removeAll(keepingCapacity: true)
    }

    /// The epoch of `key`'s last known change; for a key whose own was
    /// forgotten, the latest epoch it could have been.
    func lastChange(of key: String) -> UInt64 {
        max(invalidated[key] ?? 0, forgottenThrough)
    }

    /// Whether `key` may have changed since `epoch` was read.
    func wasInvalidated(_ key: String, since start: UInt64) -> Bool {
        if start < forgottenThrough { return true }
        return (invalidated[key] ?? 0) > start
    }
}
