import Foundation
import Glibc

/// The records appended to a segment file since its hint file last grew,
/// and where that hint file ends.
package struct HintWriter: Sendable {
    var records: [SegmentStore.ScannedRecord] = []
    /// The bytes of the segment the records gathered take.
    var covering: Range<Int>
    var lastBlockChecksum: UInt64 = 0
    /// The hint file's length: where the next chunk goes.
    var fileLength = 0
    /// A chunk could not be written: the hint stays as it is, and the next
    /// open reads the segment past its last good chunk (and rebuilds it).
    var isBroken = false

    init(end: Int) {
        covering = end ..< end
    }
}

extension SegmentStore {
    /// `0000000a.hint` beside `0000000a.seg`.
    package static func hintFileName(_ id: UInt32) -> String {
        String(fileName(id).dropLast(4)) + ".hint"
    }

    /// The number in a hint file's name, or nil for any other name.
    package static func id(ofHintFileName name: String) -> UInt32? {
        guard name.count == 13, name.hasSuffix(".hint") else { return nil }
        return id(ofFileName: name.dropLast(5) + ".seg")
    }

    package func hintPath(of id: UInt32) -> String { "\(folder)/\(SegmentStore.hintFileName(id))" }

    // MARK: - Writing

    /// Gathers for `file`'s hint the `records` of the blocks just written as
    /// `bytes` at `offset` (their offsets are within `bytes`); writes them as
    /// a chunk once enough have gathered. Call under the file's append lock.
    func noteHint(_ records: [ScannedRecord], of bytes: Data, at offset: Int, in file: SegmentFile) {
        guard let last = records.last else { return }
        let checksum = bytes.withUnsafeBytes { SegmentHint.blockChecksum(UnsafeRawBufferPointer(rebasing: $0[last.offset...])) }
        file.hint.withLock { hint in
            guard !hint.isBroken else { return }
            // Always so, as appends are serialized; a gap would make the hint describe the wrong bytes.
            guard hint.covering.upperBound == offset else {
                hint.isBroken = true
                return
            }
            for var record in records {
                record.offset += offset
                hint.records.append(record)
            }
            hint.covering = hint.covering.lowerBound ..< offset + bytes.count
            hint.lastBlockChecksum = checksum
            if hint.records.count >= SegmentHint.recordsPerChunk { writeChunk(&hint, of: file.id) }
        }
    }

    /// Writes what has gathered for the hints of `ids` (sealed files, or all at a checkpoint).
    package func writeHints(of ids: [UInt32]) {
        for id in ids {
            file(id)?.hint.withLock { writeChunk(&$0, of: id) }
        }
    }

    /// Writes what has gathered for every file's hint.
    package func writeAllHints() {
        writeHints(of: lengths().map(\.id))
    }

    private func writeChunk(_ hint: inout HintWriter, of id: UInt32) {
        defer {
            hint.records.removeAll(keepingCapacity: hint.records.count < 4 * SegmentHint.recordsPerChunk)
            hint.covering = hint.covering.upperBound ..< hint.covering.upperBound
        }
        guard !hint.records.isEmpty, !hint.isBroken else { return }
        let chunk = SegmentHint.chunk(hint.records, covering: hint.covering, lastBlockChecksum: hint.lastBlockChecksum)
        if appendToHint(id, chunk, at: hint.fileLength) {
            hint.fileLength += chunk.count
        } else {
            hint.isBroken = true
        }
    }

    /// Writes `chunk` at `offset` of the hint file of `id`, cutting it back to
    /// `offset` when that fails. A hint is never synced: one a power cut
    /// tore is cut at open, and the segment read past it.
    private func appendToHint(_ id: UInt32, _ chunk: Data, at offset: Int) -> Bool {
        let path = hintPath(of: id)
        guard DiskFaults.failure(.open, path: path) == nil else { return false }
        let fd = DiskStore.openFile(path, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return false }
        defer { Glibc.close(fd) }
        var written = DiskFaults.failure(.write, path: path) == nil
        if written {
            written = chunk.withUnsafeBytes { raw in
                var done = 0
                while done < raw.count {
                    let n = pwrite(fd, raw.baseAddress! + done, raw.count - done, off_t(offset + done))
                    if n < 0, errno == EINTR { continue }
                    guard n > 0 else { return false }
                    done += n
                }
                return true
            }
        }
        if !written { _ = ftruncate(fd, off_t(offset)) }
        return written
    }

    // MARK: - Reading

    /// What `scan(_:length:rebuildingHint:)` read.
    package struct HintedScan: Sendable {
        package var scan: Scan
        /// The bytes of the segment its hint listed; the rest was read.
        package var hintedLength: Int
        /// Whether its hint stopped short of a chunk it held (damaged, torn,
        /// or describing other bytes than the segment's).
        package var hintDisagreed: Bool
        /// The newest sequence among the records (visited or in `scan`), 0 when none.
        package var latestSequence: UInt64
    }

    /// The records of `file` up to `length`: from its hint as far as the hint
    /// checks out against the file, then by reading the rest (`scan`). With
    /// `rebuildingHint` (at open, when nothing appends to it), the hint is
    /// cut after its last good chunk and the records read are added to it.
    /// - Throws: when the segment can't be read (the hint is only a shortcut:
    ///   one that can't be read is passed over).
    /// - Parameter visit: takes the records a chunk at a time (a chunk's
    ///   records stay in the core's cache, where a whole segment's would not),
    ///   and the scan returned holds none.
    package func scan(
        _ file: SegmentFile, length: Int, rebuildingHint: Bool, visit: (([ScannedRecord]) -> Void)? = nil
    ) throws(StorageError) -> HintedScan {
        var records: [ScannedRecord] = []
        if visit != nil { records.reserveCapacity(SegmentHint.recordsPerChunk + SegmentBlock.maximumRecords) }
        var covered = 0
        var hintBytes = 0
        var hintReadable = true
        var disagreed = false
        var latest: UInt64 = 0
        switch DiskStore.readWholeFile(path: hintPath(of: file.id)) {
        case let .bytes(data, _):
            _ = SegmentHint.decode(data, into: &records) { chunk, records in
                guard chunk.covering.upperBound <= length, Self.holds(file, chunk.lastBlock) else { return false }
                covered = chunk.covering.upperBound
                hintBytes += chunk.size
                if let visit {
                    latest = max(latest, Scan.latestSequence(of: records))
                    visit(records)
                    records.removeAll(keepingCapacity: true)
                }
                return true
            }
            disagreed = hintBytes < data.count
        case .missing:
            break
        case .notARegularFile, .tooLong, .unreadable:
            // Not this run's to mend: the segment is read whole instead.
            hintReadable = false
        }
        guard let tail = file.read(offset: covered, length: max(length - covered, 0)) else {
            throw .fileOperation("Reading a segment file", path: file.path, errno: errno)
        }
        let read = SegmentStore.scan(tail)
        let tailRecords = read.records.map { record in
            var record = record
            record.offset += covered
            return record
        }
        var scan = Scan()
        if let visit {
            latest = max(latest, Scan.latestSequence(of: tailRecords))
            if !tailRecords.isEmpty { visit(tailRecords) }
        } else {
            records += tailRecords
            scan.records = records
            latest = scan.latestSequence
        }
        scan.damagedRanges = read.damagedRanges.map { $0.lowerBound + covered ..< $0.upperBound + covered }
        scan.validLength = covered + read.validLength
        if rebuildingHint, hintReadable, disagreed || !tailRecords.isEmpty {
            rebuildHint(of: file.id, keeping: hintBytes, adding: tailRecords, from: tail, at: covered, end: scan.validLength)
        }
        return HintedScan(scan: scan, hintedLength: covered, hintDisagreed: disagreed, latestSequence: latest)
    }

    /// Whether `file` holds a block with `checksum` at `offset`: a hint written
    /// for other bytes (a segment file of the same number before it) does not.
    private static func holds(_ file: SegmentFile, _ block: (offset: Int, checksum: UInt64)) -> Bool {
        var bytes: (UInt64, UInt64) = (0, 0)
        let got = withUnsafeMutableBytes(of: &bytes) { file.read(offset: block.offset, into: UnsafeMutableRawBufferPointer(rebasing: $0[..<12])) }
        return got == 12 && withUnsafeBytes(of: bytes) { SegmentHint.blockChecksum($0) } == block.checksum
    }

    /// Cuts the hint of `id` to its first `keeping` bytes, then lists
    /// `records` after them: those read from `bytes`, the segment's bytes
    /// from `start`, whose valid blocks end at `end`.
    private func rebuildHint(of id: UInt32, keeping: Int, adding records: [ScannedRecord], from bytes: Data, at start: Int, end: Int) {
        let path = hintPath(of: id)
        if keeping == 0 {
            unlink(path)
        } else if Glibc.truncate(path, off_t(keeping)) != 0 {
            return
        }
        var offset = keeping
        var first = 0
        while first < records.count {
            // A chunk ends at a block's end: all of a block's records go in one chunk.
            var next = min(first + SegmentHint.recordsPerChunk, records.count)
            while next < records.count, records[next].offset == records[next - 1].offset { next += 1 }
            let last = records[next - 1]
            let chunkStart = first == 0 ? start : records[first].offset
            let chunkEnd = next < records.count ? records[next].offset : end
            let checksum = bytes.withUnsafeBytes { SegmentHint.blockChecksum(UnsafeRawBufferPointer(rebasing: $0[(last.offset - start)...])) }
            let chunk = SegmentHint.chunk(Array(records[first ..< next]), covering: chunkStart ..< chunkEnd, lastBlockChecksum: checksum)
            guard appendToHint(id, chunk, at: offset) else { return }
            offset += chunk.count
            first = next
        }
    }
}
