import Foundation

/// A record found on disk by the rebuild after a crash.
package struct FoundRecord: Sendable {
    package var header: EntryFile.Header
    package var location: RecordLocation

    package init(header: EntryFile.Header, location: RecordLocation) {
        self.header = header
        self.location = location
    }
}

/// What `RecordStore.findRecords` found.
package struct FoundRecords: Sendable {
    /// The files of their own that hold a valid record.
    package var ownFiles: [FoundRecord] = []
    /// Each segment file's records, in order (kept as the scan found them: at
    /// a million records, a copy of each as a `FoundRecord` took 90 MB more).
    package var segments: [(id: UInt32, records: [SegmentStore.ScannedRecord])] = []
    /// The newest sequence in each segment file, for its accounting.
    package var latestSequences: [UInt32: UInt64] = [:]
    /// Damaged files quarantined and damaged runs of segment bytes skipped.
    package var damaged = 0

    /// Every record found, files of their own first.
    package var records: [FoundRecord] {
        var all = ownFiles
        all.reserveCapacity(ownFiles.count + segments.reduce(0) { $0 + $1.records.count })
        for (id, records) in segments {
            for record in records { all.append(FoundRecord(header: record.header, location: record.location(in: id))) }
        }
        return all
    }
}

extension RecordStore {
    /// Every record on disk, for the rebuild after a crash: the scan of the
    /// directory (`RecordScan`) with the rebuild's policy. Each file of its
    /// own is read whole and its checksum verified, and every record of every
    /// segment file. Damaged files of their own go to quarantine; damaged
    /// runs in a segment are skipped, the records around them kept.
    ///
    /// At open (`atOpen`), temporary files in the shard folders are what a
    /// crash left, and are deleted, and a torn segment tail is cut; later
    /// (`load()`) they may be writes under way, and are left alone.
    ///
    /// With `segmentsOnly`, only the segment files are read (their keys, not
    /// their values): a current manifest lists the files of their own. With `visit`,
    /// each segment's records go to it, on the core that read them, instead
    /// of into `FoundRecords.segments`; a throw may come after some visits.
    package func findRecords(
        atOpen: Bool, segmentsOnly: Bool = false, visiting visit: RecordScan.SegmentVisitor? = nil
    ) throws(StorageError) -> FoundRecords {
        var scan = try RecordScan(
            root: disk.root, depth: .checksums, policy: .recovering(disk, atOpen: atOpen), segmentsOnly: segmentsOnly, visit: visit
        )
        var found = FoundRecords()
        found.damaged = scan.quarantined
        found.ownFiles = scan.files.map { FoundRecord(header: $0.header, location: .ownFile(length: $0.fileLength)) }
        for segment in scan.takeSegments() {
            let records = segment.contents
            if records.validLength < segment.length {
                files.logger.warning(
                    "Kache cut a torn tail off a segment file",
                    metadata: ["segment": "\(segments.path(of: segment.id))", "bytes": "\(segment.length - records.validLength)"]
                )
            }
            if !records.damagedRanges.isEmpty {
                files.logger.warning(
                    "Kache skipped damaged bytes in a segment file; the records around them are kept",
                    metadata: ["segment": "\(segments.path(of: segment.id))", "ranges": "\(records.damagedRanges.count)"]
                )
                found.damaged += records.damagedRanges.count
            }
            found.latestSequences[segment.id] = segment.latestSequence
            if visit == nil { found.segments.append((segment.id, records.records)) }
        }
        return found
    }
}
