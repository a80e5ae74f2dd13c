import Foundation

/// Small records the writer of `async` durability holds back, per segment
/// bucket, until they fill a block: a batch of the write-behind queue holds a
/// few records of each bucket (W8's sets spread over dozens of expiry
/// buckets made blocks of 5 records and 1.1 KiB, which LZ4 shrank to 0.30
/// of their size where full blocks of 4 KiB shrink to 0.19).
///
/// A record waits at most `longestWait` (or until `drain()`/`save()`): its
/// version stays pending in the index, its value in memory, as while it was
/// queued. A version replaced meanwhile is never written at all.
package final class GatheredBlocks: Sendable {
    private struct Waiting: Sendable {
        var writes: [RecordWrite] = []
        /// The raw bytes of the block being filled, as `SegmentBlock.Builder` counts them.
        var openBlockLength = 0
        var openBlockCount = 0
        /// When the open block's first write came.
        var since: ContinuousClock.Instant
    }

    /// How long a record waits for its block to fill: well under the time
    /// a person notices, long enough for a busy writer to fill blocks.
    package static let longestWait: Duration = .milliseconds(50)

    private let waiting = Locked<[SegmentStore.Bucket: Waiting]>([:])
    /// Where the write-behind queue counts the memory its jobs hold.
    private let held: QueuedBytes

    package init(held: QueuedBytes) {
        self.held = held
    }

    /// Adds `writes` to those waiting for `bucket`'s block.
    /// - Returns: the writes that fill whole blocks, in order, to append now;
    ///   the rest wait for more.
    package func gather(_ writes: [RecordWrite], bucket: SegmentStore.Bucket) -> [RecordWrite] {
        let ready = waiting.withLock { waiting -> [RecordWrite] in
            // Taken out of the dictionary, so that its writes are appended in place:
            // a copy read out left the array shared, and each append copied it whole.
            var entry = waiting.removeValue(forKey: bucket) ?? Waiting(since: .now)
            var readyCount = 0
            for write in writes {
                let length = write.weight
                if !SegmentBlock.Builder.fits(weight: length, after: entry.openBlockLength, count: entry.openBlockCount) {
                    // The open block is full: it and every block before it go now,
                    // and this write starts the next one.
                    readyCount = entry.writes.count
                    entry.openBlockLength = 0
                    entry.openBlockCount = 0
                    entry.since = .now
                }
                entry.writes.append(write)
                entry.openBlockLength += length
                entry.openBlockCount += 1
            }
            let ready = Array(entry.writes.prefix(readyCount))
            entry.writes.removeFirst(readyCount)
            if !entry.writes.isEmpty { waiting[bucket] = entry }
            return ready
        }
        // What waits here is still held in memory; what leaves is the batch's to release.
        held.add(QueuedBytes.held(by: writes) - QueuedBytes.held(by: ready))
        return ready
    }

    /// Takes the writes that waited `longestWait` or more (all of them when
    /// `all`), by bucket. Their held bytes stay counted until `release`.
    package func takeOverdue(all: Bool) -> [SegmentStore.Bucket: [RecordWrite]] {
        let deadline = ContinuousClock.now - Self.longestWait
        return waiting.withLock { waiting in
            let overdue = waiting.filter { all || $0.value.since <= deadline }
            for bucket in overdue.keys { waiting[bucket] = nil }
            return overdue.mapValues(\.writes)
        }
    }

    /// Stops counting the memory of writes taken by `takeOverdue`, once written (or dropped).
    package func release(_ writes: [RecordWrite]) {
        held.add(-QueuedBytes.held(by: writes))
    }

    /// Drops every waiting write unwritten, as a killed process loses them.
    func abandon() {
        release(takeOverdue(all: true).values.flatMap { $0 })
    }

    /// Writes waiting.
    package var count: Int { waiting.withLock { $0.values.reduce(0) { $0 + $1.writes.count } } }

    /// When the oldest waiting write is due; nil when none waits.
    package var nextDeadline: ContinuousClock.Instant? {
        waiting.withLock { $0.values.map(\.since).min().map { $0 + Self.longestWait } }
    }
}
