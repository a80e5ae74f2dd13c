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
    package var records: [FoundRecord] = []
    /// The newest sequence in each segment file, for its accounting.
    package var latestSequences: [UInt32: UInt64] = [:]
    /// Damaged files quarantined and damaged runs of segment bytes skipped.
    package var damaged = 0
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
    /// With `segmentsOnly`, only the segment files are read (through their
    /// hints): a current manifest lists the files of their own.
    package func findRecords(atOpen: Bool, segmentsOnly: Bool = false) throws(StorageError) -> FoundRecords {
        var scan = try RecordScan(root: disk.root, depth: .checksums, policy: .recovering(disk, atOpen: atOpen), segmentsOnly: segmentsOnly)
        var found = FoundRecords()
        found.damaged = scan.quarantined
        // Each segment's records are let go once copied: at a million records, two copies at once took 200 MB.
        var scanned = scan.takeSegments()
        found.records.reserveCapacity(scan.files.count + scanned.reduce(0) { $0 + $1.contents.records.count })
        found.records += scan.files.map { FoundRecord(header: $0.header, location: .ownFile(length: $0.fileLength)) }
        for index in scanned.indices {
            let segment = scanned[index]
            defer { scanned[index].contents.records = [] }
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
            var latest: UInt64 = 0
            for record in records.records {
                latest = max(latest, record.header.sequence)
                found.records.append(FoundRecord(
                    header: record.header, location: record.location(in: segment.id)
                ))
            }
            found.latestSequences[segment.id] = latest
        }
        return found
    }
}
