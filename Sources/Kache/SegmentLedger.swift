/// What the index knows of the segment files, by number: their lengths and
/// how many of their bytes still hold live entries. No paths, no I/O.
struct SegmentLedger: Sendable {
    struct Segment: Sendable {
        /// Bytes appended so far (live, dead and tombstones).
        var length = 0
        /// Bytes of records that hold a live entry.
        var liveBytes = 0
        var liveCount = 0
        /// The latest expiry of any record in it: past it the whole file can go.
        var latestExpiry: Int64 = .min
        /// Appends have moved on to another file: it only shrinks from now on.
        var isSealed = false

        var deadBytes: Int { length - liveBytes }
    }

    private(set) var segments: [UInt32: Segment] = [:]
    private(set) var totalBytes = 0
    private(set) var liveBytes = 0

    var fileCount: Int { segments.count }
    var deadBytes: Int { totalBytes - liveBytes }
}
