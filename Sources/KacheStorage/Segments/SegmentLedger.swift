/// The accounting of the segment files, by number: their lengths, how many
/// of their bytes still hold live entries, and whether the last checkpoint
/// covers them. No paths, no I/O: `SegmentStore` keeps it beside its files,
/// under the same lock, and is its only owner.
///
/// A record that stops holding a live entry (replaced, removed, expired,
/// evicted) turns its bytes dead. A file's bytes come back when it goes
/// whole (nothing live in it) or is compacted (live records copied forward).
/// Either is allowed only once the manifest's checkpoint covers every record
/// in it: recovery after a crash replays the records written after the
/// checkpoint, tombstones included, and must find them all.
package struct SegmentLedger: Sendable {
    package struct Segment: Sendable {
        /// Bytes appended so far (live, dead and tombstones).
        package var length = 0
        /// Bytes of records that hold a live entry.
        package var liveBytes = 0
        package var liveCount = 0
        /// The newest record in it.
        package var latestSequence: UInt64 = 0
        /// Appends have moved on to another file: it only shrinks from now on.
        package var isSealed = false

        package var deadBytes: Int { length - liveBytes }
    }

    package private(set) var segments: [UInt32: Segment] = [:]
    package private(set) var totalBytes = 0
    package private(set) var liveBytes = 0
    /// Records with a lower sequence are covered by the manifest last written.
    package private(set) var checkpoint: UInt64 = 0
    /// Bytes appended since that manifest was written.
    package private(set) var appendedSinceCheckpoint = 0

    package init() {}

    package var fileCount: Int { segments.count }
    package var deadBytes: Int { totalBytes - liveBytes }

    /// Counts `bytes` appended to `segment` by a record of `sequence`; `live`
    /// when it holds an entry of the index.
    /// Each note looks its file up once: a commit notes every record the
    /// writer lands, under the index's lock, and five lookups a record took a
    /// tenth of the writer's commits in W8.
    package mutating func noteAppended(_ segment: UInt32, bytes: Int, sequence: UInt64, live: Bool) {
        Self.append(bytes, sequence: sequence, live: live, to: &segments[segment, default: Segment()])
        totalBytes += bytes
        appendedSinceCheckpoint += bytes
        if live { liveBytes += bytes }
    }

    private static func append(_ bytes: Int, sequence: UInt64, live: Bool, to segment: inout Segment) {
        segment.length += bytes
        segment.latestSequence = max(segment.latestSequence, sequence)
        if live {
            segment.liveBytes += bytes
            segment.liveCount += 1
        }
    }

    /// A manifest covering every record below `sequence` was written.
    package mutating func noteCheckpoint(_ sequence: UInt64) {
        checkpoint = max(checkpoint, sequence)
        appendedSinceCheckpoint = 0
    }

    /// Counts `count` records of `bytes` in all, already in `segment`, as
    /// holding entries again (a restore).
    package mutating func noteLive(_ segment: UInt32, bytes: Int, count: Int = 1) {
        guard let index = segments.index(forKey: segment) else { return }
        segments.values[index].liveBytes += bytes
        segments.values[index].liveCount += count
        liveBytes += bytes
    }

    /// A record in `segment` of `bytes` no longer holds a live entry.
    package mutating func noteDead(_ segment: UInt32, bytes: Int) {
        guard let index = segments.index(forKey: segment) else { return }
        segments.values[index].liveBytes -= bytes
        segments.values[index].liveCount -= 1
        liveBytes -= bytes
    }

    /// Registers a file found at open with its length, sealed, all of it dead until restored.
    package mutating func noteExisting(_ segment: UInt32, length: Int, latestSequence: UInt64) {
        segments[segment] = Segment(length: length, liveBytes: 0, liveCount: 0, latestSequence: latestSequence, isSealed: true)
        totalBytes += length
    }

    package mutating func seal(_ ids: [UInt32]) {
        for id in ids where segments[id] != nil { segments[id]!.isSealed = true }
    }

    /// What the files occupy on the file system, in whole units of `unit` bytes.
    /// - Complexity: O(files)
    package func allocatedBytes(unit: Int) -> Int {
        segments.values.reduce(0) { $0 + ($1.length + unit - 1) / unit * unit }
    }

    /// The bytes counted in `id` so far.
    package func length(of id: UInt32) -> Int { segments[id]?.length ?? -1 }

    /// Forgets a deleted file.
    package mutating func remove(_ id: UInt32) {
        guard let segment = segments.removeValue(forKey: id) else { return }
        totalBytes -= segment.length
        liveBytes -= segment.liveBytes
    }

    /// Whether the checkpoint covers every record of the file.
    package func isCovered(_ segment: Segment) -> Bool {
        segment.latestSequence < checkpoint
    }

    /// Sealed files the checkpoint covers that hold nothing live: they go whole.
    package func emptyFiles() -> [UInt32] {
        segments.filter { $0.value.isSealed && $0.value.liveCount == 0 && isCovered($0.value) }.map(\.key)
    }

    /// Sealed files the checkpoint covers whose dead bytes reach `threshold` of
    /// their length, most dead first: compacting them copies their live records forward.
    package func compactionCandidates(threshold: Double) -> [UInt32] {
        segments.filter { id, segment in
            segment.isSealed && segment.liveCount > 0 && isCovered(segment)
                && Double(segment.deadBytes) >= threshold * Double(segment.length)
        }
        .sorted { $0.value.deadBytes > $1.value.deadBytes }
        .map(\.key)
    }
}
