import Foundation
import Glibc
import Synchronization

/// The segment files under `segments/`: small entries' records, appended
/// back to back. It knows record bytes and file numbers, never keys' meaning,
/// Pools or expiry rules (the bucket it is handed is just a grouping key).
///
/// One file is open for appending per expiry bucket, so that records that
/// end together sit together and a whole file can go with one unlink
/// (Segcache's idea). A file past `maximumLength` is sealed and a new one
/// opened for its bucket. Files from an earlier run are never appended to:
/// their torn tail (if a crash left one) is cut at open, once.
///
/// Appends to one file are serialized, so a file is always a run of complete
/// records followed by at most one torn record: a crash can cut the tail,
/// never leave a hole before an acknowledged record.
///
/// It also owns the files' accounting (`SegmentLedger`), under the same lock
/// as the table of files: the engine reports which records hold live entries
/// (`noteAppended`, `noteLive`, `noteDead`), and decides nothing about files.
package final class SegmentStore: Sendable {
    /// Where the files are.
    package let folder: String
    /// A file is sealed once an append would take it past this length.
    package let maximumLength: Int
    /// Flush appended data before an append returns (`fsync` durability).
    package let syncsEveryWrite: Bool
    private let table: Locked<Table>
    private let writtenBytes = Atomic<UInt64>(0)
    private let flushFailure = Atomic<Int32>(0)

    /// The most files open for appending at once; past it the one whose
    /// records end first is sealed.
    package static let maximumOpenFiles = 64

    private struct Table: Sendable {
        var files: [UInt32: SegmentFile] = [:]
        var openByBucket: [Bucket: UInt32] = [:]
        var nextID: UInt32 = 1
        var ledger = SegmentLedger()
    }

    /// The group a record is appended with: records whose expiry falls in the
    /// same window share files. Windows are narrow for short lifetimes and
    /// wide for long ones (1/4 of the time to live, rounded down to a power of
    /// two seconds), so a file's records expire within a fraction of their
    /// lifetime of each other, and about four buckets per doubling of the
    /// time to live are open at once (at 1/8, W8's lifetimes of 1 to 60
    /// minutes kept more buckets open than `maximumOpenFiles`, and sealing
    /// the overflow left 4,227 files for 1,000,000 entries).
    package struct Bucket: Hashable, Sendable, Comparable {
        package var shift: Int8
        package var index: Int64

        /// Tombstones are only needed until the next checkpoint: they get files of their own.
        package static let tombstones = Bucket(shift: -1, index: 0)

        package init(shift: Int8, index: Int64) {
            self.shift = shift
            self.index = index
        }

        /// The bucket of a record that expires at `expiry` (ns since 1970), written at `now`.
        package init(expiry: Int64, now: Int64) {
            let seconds = max(expiry / 1_000_000_000, 0)
            let ttl = max((expiry - now) / 1_000_000_000, 1)
            let shift = max(0, (Int64.bitWidth - 1 - ttl.leadingZeroBitCount) - 2)
            self.init(shift: Int8(shift), index: seconds >> shift)
        }

        /// Roughly when its records end, for choosing which file to seal.
        package var end: Int64 { shift < 0 ? .min : (index + 1) << Int64(shift) }

        package static func < (a: Bucket, b: Bucket) -> Bool { (a.end, a.shift) < (b.end, b.shift) }
    }

    /// One segment file, open for reading (and, while it is its bucket's, for
    /// appending). The descriptor is closed when the last user lets go, so a
    /// reader that took it before the file was deleted still reads its bytes.
    package final class SegmentFile: Sendable {
        package let id: UInt32
        package let path: String
        package let descriptor: Int32
        /// Bytes in the file (where the next append goes), and whether it was
        /// retired: taken out for deletion, so an append must go elsewhere.
        fileprivate let appendState: Locked<(length: Int, isRetired: Bool)>
        /// Bytes known flushed to the device; the lock is held during the flush,
        /// so writers that arrive meanwhile share the next one (group commit).
        /// `failure`: the errno of a flush that failed. The kernel may have
        /// dropped the pages it could not write and reports that only once,
        /// so a later flush that succeeds proves nothing about the bytes past
        /// `flushed`: every flush that needs them fails with it from then on.
        fileprivate let flushState: Locked<(flushed: Int, failure: Int32?)>

        fileprivate init(id: UInt32, path: String, descriptor: Int32, length: Int) {
            self.id = id
            self.path = path
            self.descriptor = descriptor
            appendState = Locked((length, false))
            flushState = Locked((length, nil))
        }

        deinit { Glibc.close(descriptor) }

        package var length: Int { appendState.withLock { $0.length } }

        /// Reads into `buffer` from `offset`; the count read (fewer where the
        /// file ends), or -1 with `errno` set.
        package func read(offset: Int, into buffer: UnsafeMutableRawBufferPointer) -> Int {
            DiskStore.readFully(descriptor, path: path, at: offset, into: buffer)
        }

        /// The first `length` bytes of the file, mapped rather than copied (an
        /// open reads every segment whole: the copy of W1's was a fifth of its
        /// scan); nil with `errno` set when the file can't be mapped. Only for
        /// lengths the file keeps while the bytes live (a mapped page past the
        /// end would fault): segment files are cut only at open, after they
        /// are read, and a file found shorter is read instead.
        package func mapped(length: Int) -> Data? {
            guard length > 0 else { return Data() }
            if let code = DiskFaults.failure(.read, path: path) {
                errno = code
                return nil
            }
            var info = stat()
            guard fstat(descriptor, &info) == 0, Int(info.st_size) >= length else { return read(offset: 0, length: length) }
            guard let address = mmap(nil, length, PROT_READ, MAP_PRIVATE, descriptor, 0), address != MAP_FAILED else { return nil }
            return Data(bytesNoCopy: address, count: length, deallocator: .custom { address, length in munmap(address, length) })
        }

        /// Reads `length` bytes at `offset`; the bytes read, or nil with `errno` set.
        package func read(offset: Int, length: Int) -> Data? {
            var bytes = Data(count: length)
            let got = bytes.withUnsafeMutableBytes { DiskStore.readFully(descriptor, path: path, at: offset, into: $0) }
            guard got >= 0 else { return nil }
            if got < length { bytes.count = got }
            return bytes
        }
    }

    package static func fileName(_ id: UInt32) -> String {
        let hex = String(id, radix: 16)
        return String(repeating: "0", count: max(0, 8 - hex.count)) + hex + ".seg"
    }

    /// The number in a segment file's name, or nil for any other name.
    package static func id(ofFileName name: String) -> UInt32? {
        guard name.count == 12, name.hasSuffix(".seg") else { return nil }
        return UInt32(name.prefix(8), radix: 16).flatMap { $0 == 0 ? nil : $0 }
    }

    package init(folder: String, maximumLength: Int, syncsEveryWrite: Bool) {
        // An offset takes 24 bits of a location; a record appended to an empty file may pass the length.
        precondition(maximumLength + SegmentBlock.maximumRawLength < RecordLocation.offsetLimit, "segment files are at most 15 MiB")
        self.folder = folder
        self.maximumLength = maximumLength
        self.syncsEveryWrite = syncsEveryWrite
        table = Locked(Table())
    }

    /// Bytes appended since open.
    package var bytesWritten: UInt64 { writtenBytes.load(ordering: .relaxed) }

    package func path(of id: UInt32) -> String { "\(folder)/\(SegmentStore.fileName(id))" }

    // MARK: - Opening

    /// Opens the files an earlier run left, for reading only. Files that
    /// can't be opened throw: their records would be missing from the index.
    /// - Returns: their numbers, ascending.
    package func openExisting() throws(StorageError) -> [UInt32] {
        var ids: [UInt32] = []
        let names = try DiskStore.listFolder(folder)
        // Hints, which format version 4 kept beside its segments: blocks now hold their keys apart from their values.
        for name in names where name.hasSuffix(".hint") { unlink("\(folder)/\(name)") }
        for name in names {
            guard let id = SegmentStore.id(ofFileName: name) else { continue }
            let path = "\(folder)/\(name)"
            let fd = DiskStore.openFile(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW)
            guard fd >= 0 else { throw .fileOperation("Opening a segment file", path: path, errno: errno) }
            var info = stat()
            guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
                Glibc.close(fd)
                continue
            }
            let file = SegmentFile(id: id, path: path, descriptor: fd, length: Int(info.st_size))
            table.withLock { table in
                table.files[id] = file
                table.nextID = max(table.nextID, id &+ 1)
            }
            ids.append(id)
        }
        return ids.sorted()
    }

    /// The file `id`, for reading; nil when it was deleted.
    package func file(_ id: UInt32) -> SegmentFile? {
        table.withLock { $0.files[id] }
    }

    /// Every file's number and length.
    package func lengths() -> [(id: UInt32, length: Int)] {
        table.withLock { $0.files.values.map { ($0.id, $0.length) } }.sorted { $0.id < $1.id }
    }

    // MARK: - Appending

    /// Where an append put its records.
    package struct Placement: Sendable {
        package var segment: UInt32
        /// The offset of the first record; the others follow back to back.
        package var offset: Int
    }

    /// Appends `bytes` (whole blocks) to the open file of `bucket`, with one
    /// write call, sealing it first when they would take it past `maximumLength`.
    /// With `syncsEveryWrite`, returns once the
    /// data is flushed (sharing the flush with concurrent appends to the same file).
    /// - Throws: the file error; a partial write is cut off again, so the file
    ///   stays a run of whole blocks.
    package func append(_ bytes: Data, bucket: Bucket) throws(StorageError) -> Placement {
        var sealed: [UInt32] = []
        while true {
            let file = try openFile(for: bucket, sealed: &sealed)
            let outcome = try file.appendState.withLock { state throws(StorageError) -> Int? in
                // A file retired meanwhile (it had just been sealed and emptied) takes nothing more.
                guard !state.isRetired else { return nil }
                guard state.length == 0 || state.length + bytes.count <= maximumLength else { return nil }
                try write(bytes, to: file, at: state.length)
                state.length += bytes.count
                return state.length - bytes.count
            }
            guard let offset = outcome else {
                seal(file.id, bucket: bucket)
                sealed.append(file.id)
                continue
            }
            writtenBytes.wrappingAdd(UInt64(bytes.count), ordering: .relaxed)
            if !sealed.isEmpty { table.withLock { $0.ledger.seal(sealed) } }
            if syncsEveryWrite {
                do throws(StorageError) {
                    try flush(file, upTo: offset + bytes.count)
                } catch {
                    // In the file, but the caller is told the append failed and
                    // counts nothing: counted dead here, so the file can go.
                    table.withLock { $0.ledger.noteAppended(file.id, bytes: bytes.count, sequence: 0, live: false) }
                    throw error
                }
            }
            return Placement(segment: file.id, offset: offset)
        }
    }

    private func write(_ bytes: Data, to file: SegmentFile, at offset: Int) throws(StorageError) {
        var failure: Int32 = 0
        bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                if let code = DiskFaults.failure(.write, path: file.path) {
                    failure = code
                    return
                }
                let length = DiskFaults.writeLength(raw.count - done, path: file.path)
                let n = pwrite(file.descriptor, raw.baseAddress! + done, length, off_t(offset + done))
                if n < 0, errno == EINTR { continue }
                guard n > 0 else {
                    failure = n < 0 ? errno : ENOSPC
                    return
                }
                done += n
            }
        }
        guard failure != 0 else { return }
        _ = ftruncate(file.descriptor, off_t(offset))
        throw .fileOperation("Appending to the segment file", path: file.path, errno: failure)
    }

    /// Flushes `file` up to at least `end`; one flush serves every writer waiting for it.
    /// After a failed flush, the file takes no more appends and every flush
    /// of bytes past those flushed before fails (`SegmentFile.flushState`).
    private func flush(_ file: SegmentFile, upTo end: Int) throws(StorageError) {
        let failure = file.flushState.withLock { state -> Int32? in
            guard state.flushed < end else { return nil }
            if let failure = state.failure { return failure }
            let target = file.length
            var code = DiskFaults.failure(.fsync, path: file.path) ?? 0
            if code == 0, fdatasync(file.descriptor) != 0 { code = errno }
            guard code == 0 else {
                state.failure = code
                return code
            }
            state.flushed = target
            return nil
        }
        guard let failure else { return }
        _ = seal([file.id])
        flushFailure.store(failure, ordering: .relaxed)
        throw .fileOperation("Flushing the segment file", path: file.path, errno: failure)
    }

    /// The errno of the last flush of a segment file that failed, 0 if none
    /// did: `save()` can't call the files durable after one (`DiskStore.syncEverything`).
    package var failedFlush: Int32 { flushFailure.load(ordering: .relaxed) }

    /// The open file of `bucket`, creating it (and sealing the one whose records
    /// end first, past `maximumOpenFiles`).
    private func openFile(for bucket: Bucket, sealed: inout [UInt32]) throws(StorageError) -> SegmentFile {
        if let file = table.withLock({ table in table.openByBucket[bucket].flatMap { table.files[$0] } }) { return file }
        let id = table.withLock { table -> UInt32 in
            defer { table.nextID &+= 1 }
            return table.nextID
        }
        let path = path(of: id)
        let fd = DiskStore.openFile(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw .fileOperation("Creating a segment file", path: path, errno: errno) }
        // The folder's entry goes to the device before anything is appended, or a power cut could lose the file.
        if syncsEveryWrite, case let code = DiskStore.flushFolder(folder), code != 0 {
            Glibc.close(fd)
            unlink(path)
            throw .fileOperation("Flushing the segment folder", path: folder, errno: code)
        }
        let file = SegmentFile(id: id, path: path, descriptor: fd, length: 0)
        let (winner, evicted) = table.withLock { table -> (SegmentFile, UInt32?) in
            // Another thread may have opened one for the bucket meanwhile: use it, keep ours as a spare file.
            if let existing = table.openByBucket[bucket].flatMap({ table.files[$0] }) {
                table.files[id] = file
                return (existing, nil)
            }
            table.files[id] = file
            table.openByBucket[bucket] = id
            var evicted: UInt32?
            if table.openByBucket.count > SegmentStore.maximumOpenFiles,
               let first = table.openByBucket.keys.filter({ $0 != bucket }).min()
            {
                evicted = table.openByBucket.removeValue(forKey: first)
            }
            return (file, evicted)
        }
        if winner !== file {
            // An empty file nobody appends to: delete it rather than keep it.
            delete([id])
        }
        if let evicted { sealed.append(evicted) }
        return winner
    }

    /// Stops appending to `id` (its bucket gets a new file on the next append).
    private func seal(_ id: UInt32, bucket: Bucket) {
        table.withLock { table in
            if table.openByBucket[bucket] == id { table.openByBucket[bucket] = nil }
        }
    }

    /// Seals those of `ids` that are open for appending.
    /// - Returns: the numbers of the files sealed.
    package func seal(_ ids: [UInt32]) -> [UInt32] {
        let wanted = Set(ids)
        return table.withLock { table in
            let sealed = table.openByBucket.filter { wanted.contains($0.value) }
            for bucket in sealed.keys { table.openByBucket[bucket] = nil }
            table.ledger.seal(Array(sealed.values))
            return Array(sealed.values)
        }
    }

    /// Flushes the file `id` to the device (compaction's copies, before the original goes).
    package func flush(_ id: UInt32) throws(StorageError) {
        guard let file = file(id) else { return }
        try flush(file, upTo: file.length)
    }

    /// Seals every open file: the ones a checkpoint may then reclaim.
    /// - Returns: the numbers of the files sealed.
    package func sealAll() -> [UInt32] {
        table.withLock { table in
            defer { table.openByBucket.removeAll() }
            table.ledger.seal(Array(table.openByBucket.values))
            return Array(table.openByBucket.values)
        }
    }

    // MARK: - Deleting

    /// Takes out of use the sealed files that hold nothing live and that the
    /// last checkpoint covers, if every byte appended to them is accounted
    /// for (a writer that took one just before it was sealed may still have
    /// to report its append): no append reaches them afterwards, and
    /// `file(_:)` no longer finds them. Readers that hold one still read it.
    /// - Returns: the files retired, to `unlinkRetired` next.
    package func retireEmptyFiles() -> [UInt32] {
        table.withLock { table in
            var retired: [UInt32] = []
            for id in table.ledger.emptyFiles() {
                guard let file = table.files[id] else { continue }
                let expected = table.ledger.length(of: id)
                let idle = file.appendState.withLock { state in
                    guard state.length == expected else { return false }
                    state.isRetired = true
                    return true
                }
                guard idle else { continue }
                table.files[id] = nil
                for (bucket, open) in table.openByBucket where open == id { table.openByBucket[bucket] = nil }
                table.ledger.remove(id)
                retired.append(id)
            }
            return retired
        }
    }

    /// Seals the open files that hold nothing live or whose dead bytes reach
    /// `threshold` of their length: from now on they only lose bytes, and can go.
    package func sealFilesWorthReclaiming(threshold: Double) {
        table.withLock { table in
            let worthSealing = table.openByBucket.filter { _, id in
                guard let segment = table.ledger.segments[id], segment.length > 0 else { return false }
                return segment.liveCount == 0 || Double(segment.deadBytes) >= threshold * Double(segment.length)
            }
            for bucket in worthSealing.keys { table.openByBucket[bucket] = nil }
            table.ledger.seal(Array(worthSealing.values))
        }
    }

    // MARK: - Accounting

    /// Runs `body` with the accounting, under the lock: keep it short.
    package func withLedger<R: Sendable>(_ body: (SegmentLedger) -> R) -> R {
        table.withLock { body($0.ledger) }
    }

    // The index reports with these what happens to the records it points at;
    // a location in a file of its own is no segment's, and is ignored.

    /// Counts a record appended at `location` by a version of `sequence`;
    /// `live` when it holds an entry.
    package func noteAppended(_ location: RecordLocation, sequence: UInt64, live: Bool) {
        guard !location.isOwnFile else { return }
        table.withLock { $0.ledger.noteAppended(location.segment, bytes: location.length, sequence: sequence, live: live) }
    }

    /// Counts the record at `location` as holding an entry (a reinstated entry).
    package func noteLive(_ location: RecordLocation) {
        guard !location.isOwnFile else { return }
        table.withLock { $0.ledger.noteLive(location.segment, bytes: location.length) }
    }

    /// Counts the records at `locations` as holding entries (a restore), under
    /// one lock: a lock per entry cost W5's open a twentieth.
    package func noteLive(_ locations: [RecordLocation]) {
        var tally = LiveTally()
        for location in locations { tally.add(location) }
        noteLive(tally)
    }

    /// Counts the records `tally` counted as holding entries, under one lock.
    package func noteLive(_ tally: LiveTally) {
        table.withLock { table in
            for (id, live) in tally.bySegment { table.ledger.noteLive(id, bytes: live.bytes, count: live.count) }
        }
    }

    /// Records in segments counted by segment, for `noteLive(_:)`: a restore
    /// counts on each core apart, and the sums go in at once.
    package struct LiveTally: Sendable {
        private var counted: [UInt32: (bytes: Int, count: Int)] = [:]
        /// The latest segment's, kept out of the dictionary: a restore counts
        /// a segment's records one after another.
        private var current: (segment: UInt32, bytes: Int, count: Int)?

        package init() {}

        /// Each segment's records counted, and their bytes.
        package var bySegment: [UInt32: (bytes: Int, count: Int)] {
            var all = counted
            if let (segment, bytes, count) = current { Self.add(bytes, count, to: segment, in: &all) }
            return all
        }

        /// Counts the record at `location`, if it is in a segment.
        package mutating func add(_ location: RecordLocation) {
            guard !location.isOwnFile else { return }
            if current?.segment != location.segment {
                if let (segment, bytes, count) = current { Self.add(bytes, count, to: segment, in: &counted) }
                current = (location.segment, 0, 0)
            }
            current!.bytes += location.length
            current!.count += 1
        }

        /// Counts `count` records of segment `segment`, `bytes` long in all.
        package mutating func add(segment: UInt32, bytes: Int, count: Int) {
            Self.add(bytes, count, to: segment, in: &counted)
        }

        /// Adds another tally's counts.
        package mutating func add(_ other: LiveTally) {
            for (segment, live) in other.bySegment { Self.add(live.bytes, live.count, to: segment, in: &counted) }
        }

        private static func add(_ bytes: Int, _ count: Int, to segment: UInt32, in tally: inout [UInt32: (bytes: Int, count: Int)]) {
            tally[segment, default: (0, 0)].bytes += bytes
            tally[segment]!.count += count
        }
    }

    /// The record at `location` no longer holds an entry.
    package func noteDead(_ location: RecordLocation) {
        guard !location.isOwnFile else { return }
        table.withLock { $0.ledger.noteDead(location.segment, bytes: location.length) }
    }

    /// `noteAppended` and `noteDead` calls gathered, to make under one lock:
    /// the writer commits a batch of records under the store's lock, and a
    /// lock of the table per record was an eighth of that time on W8.
    package struct LedgerChanges: Sendable {
        fileprivate enum Change {
            case appended(RecordLocation, sequence: UInt64, live: Bool)
            case dead(RecordLocation)
        }

        fileprivate var changes: [Change] = []

        package init() {}

        package mutating func noteAppended(_ location: RecordLocation, sequence: UInt64, live: Bool) {
            if !location.isOwnFile { changes.append(.appended(location, sequence: sequence, live: live)) }
        }

        package mutating func noteDead(_ location: RecordLocation) {
            if !location.isOwnFile { changes.append(.dead(location)) }
        }
    }

    /// Makes `changes`, in their order, under one lock.
    package func apply(_ changes: LedgerChanges) {
        guard !changes.changes.isEmpty else { return }
        table.withLock { table in
            for change in changes.changes {
                switch change {
                case let .appended(location, sequence, live):
                    table.ledger.noteAppended(location.segment, bytes: location.length, sequence: sequence, live: live)
                case let .dead(location):
                    table.ledger.noteDead(location.segment, bytes: location.length)
                }
            }
        }
    }

    /// Traps unless the accounting counts as live exactly the records at
    /// `locations`, those the index points at. For tests; O(records).
    package func checkLive(_ locations: [RecordLocation]) {
        var tally = LiveTally()
        for location in locations { tally.add(location) }
        let live = tally.bySegment
        withLedger { ledger in
            for (id, live) in live {
                let counted = ledger.segments[id]
                precondition(counted != nil, "entries point into segment \(id), which the ledger does not know")
                precondition(counted!.liveBytes == live.bytes && counted!.liveCount == live.count,
                             "segment \(id): ledger counts \(counted!.liveCount) live records of \(counted!.liveBytes) bytes, the index \(live.count) of \(live.bytes)")
            }
            for (id, counted) in ledger.segments where live[id] == nil {
                precondition(counted.liveCount == 0 && counted.liveBytes == 0, "segment \(id): ledger counts \(counted.liveCount) live records the index does not hold")
            }
        }
    }

    /// Traps unless the accounting gives each file its length on disk: every
    /// byte appended is counted (the shares of a block add up to it), and
    /// every file is known. For tests, when no append is under way.
    package func checkLengths() {
        table.withLock { table in
            for (id, file) in table.files {
                var info = stat()
                precondition(fstat(file.descriptor, &info) == 0 && Int(info.st_size) == file.length,
                             "segment \(id): \(info.st_size) bytes on disk, \(file.length) appended")
                precondition(table.ledger.length(of: id) == file.length,
                             "segment \(id): the ledger counts \(table.ledger.length(of: id)) bytes of \(file.length)")
            }
            precondition(Set(table.ledger.segments.keys) == Set(table.files.keys), "the ledger and the table know different files")
        }
    }

    /// A manifest covering every record below `sequence` was written.
    package func noteCheckpoint(_ sequence: UInt64) {
        table.withLock { $0.ledger.noteCheckpoint(sequence) }
    }

    /// Starts the accounting over from the files as they are (before a
    /// rebuild): each sealed, all of its bytes dead until the entries in it
    /// are noted live. `latestSequences`: the newest record found in each.
    package func restartAccounting(latestSequences: [UInt32: UInt64]) {
        table.withLock { table in
            table.ledger = SegmentLedger()
            for (id, file) in table.files {
                table.ledger.noteExisting(id, length: file.length, latestSequence: latestSequences[id] ?? 0)
            }
        }
    }

    /// Deletes retired files.
    package func unlinkRetired(_ ids: [UInt32]) {
        guard !ids.isEmpty else { return }
        for id in ids { unlink(path(of: id)) }
        if syncsEveryWrite { DiskStore.syncFolder(folder) }
    }

    /// Forgets the files and deletes them (readers that hold one still read it).
    package func delete(_ ids: [UInt32]) {
        guard !ids.isEmpty else { return }
        table.withLock { table in
            for id in ids {
                table.files[id] = nil
                for (bucket, open) in table.openByBucket where open == id { table.openByBucket[bucket] = nil }
            }
        }
        for id in ids { unlink(path(of: id)) }
        if syncsEveryWrite { DiskStore.syncFolder(folder) }
    }

    /// Cuts `id` to `length` bytes: a torn tail a crash left (only at open).
    package func truncate(_ id: UInt32, to length: Int) {
        guard let file = file(id) else { return }
        file.appendState.withLock { state in
            guard length < state.length, ftruncate(file.descriptor, off_t(length)) == 0 else { return }
            state.length = length
        }
        file.flushState.withLock { $0.flushed = min($0.flushed, length) }
    }

    // MARK: - Reading

    /// Why `readRecord(at:read:)` found no record.
    package enum ReadFailure: Error {
        case unreadable(errno: Int32)
        case damaged(EntryFile.Damage)
    }

    /// The bytes a read takes at once: a page, which holds a block of 16 KiB
    /// raw as LZ4 mostly leaves it; a longer block takes a second read.
    static let readAhead = 4 << 10

    /// Reads and checks the record at `location` in a segment file: the
    /// record of version 2 there, or record `location.index` of the block
    /// there (its checksum verified, decompressed whole, only that record
    /// decoded). Not whose record it is.
    /// - Parameter read: reads into the buffer from an offset and returns
    ///   the bytes read (fewer where the file ends), or -1 with `errno` set
    ///   when the file can't be read.
    package static func readRecord(
        at location: RecordLocation, read: (_ offset: Int, _ into: UnsafeMutableRawBufferPointer) -> Int
    ) throws(ReadFailure) -> (header: EntryFile.Header, payload: Data) {
        let offset = location.offset
        // A version-2 record's location gives its length; a block's, its share of the block.
        var buffer = UnsafeMutableRawBufferPointer.allocate(byteCount: max(location.length, readAhead), alignment: 8)
        defer { buffer.deallocate() }
        var got = read(offset, buffer)
        guard got >= 0 else { throw .unreadable(errno: errno) }
        guard let blockLength = SegmentBlock.blockLength(at: UnsafeRawBufferPointer(rebasing: buffer[..<got])) else {
            let record = UnsafeRawBufferPointer(rebasing: buffer[..<min(got, location.length)])
            do throws(EntryFile.Damage) { return try EntryFile.decode(record) } catch { throw .damaged(error) }
        }
        if got < blockLength, got == buffer.count {
            let longer = UnsafeMutableRawBufferPointer.allocate(byteCount: blockLength, alignment: 8)
            longer.copyMemory(from: UnsafeRawBufferPointer(buffer))
            buffer.deallocate()
            buffer = longer
            let rest = read(offset + got, UnsafeMutableRawBufferPointer(rebasing: buffer[got...]))
            guard rest >= 0 else { throw .unreadable(errno: errno) }
            got += rest
        }
        do throws(EntryFile.Damage) {
            return try SegmentBlock.record(location.index, in: UnsafeRawBufferPointer(rebasing: buffer[..<min(got, blockLength)]))
        } catch {
            throw .damaged(error)
        }
    }

    /// Every record, with its value, of the block (or the version-2 record)
    /// at `offset` of a segment file's `bytes`; nil when it does not decode.
    package static func records(at offset: Int, in bytes: Data) -> [(header: EntryFile.Header, payload: Data)]? {
        let rest = bytes[(bytes.startIndex + offset)...]
        if let length = rest.withUnsafeBytes({ SegmentBlock.blockLength(at: $0) }) {
            guard length <= rest.count, let contents = try? SegmentBlock.decode(rest.prefix(length)) else { return nil }
            return contents.records.indices.map { (contents.records[$0].header, contents.value(of: $0)) }
        }
        guard let length = rest.withUnsafeBytes({ EntryFile.recordLength(at: $0) }), length <= rest.count,
              let record = try? EntryFile.decode(rest.prefix(length))
        else { return nil }
        return [record]
    }

    // MARK: - Scanning

    /// A record found by `scan`.
    package struct ScannedRecord: Sendable, Equatable {
        package var header: EntryFile.Header
        /// Where its block (or, in a file of version 2, the record itself) starts.
        package var offset: Int
        /// Its index in its block; 0 for a record of version 2.
        package var index: Int
        /// What it costs: its share of its block, or the record's length.
        package var length: Int

        package init(header: EntryFile.Header, offset: Int, index: Int, length: Int) {
            self.header = header
            self.offset = offset
            self.index = index
            self.length = length
        }

        /// Its location, in the segment file `segment`.
        package func location(in segment: UInt32) -> RecordLocation {
            RecordLocation(segment: segment, offset: offset, index: index, length: length)
        }
    }

    /// A valid block (or a valid record of version 2) as `scan` read it.
    package struct ScannedBlock: Sendable {
        /// Where it starts in the file.
        package var offset: Int
        /// Its records; a record's index in them is its index in the block (0 for version 2).
        package var keys: BlockKeys
    }

    /// What `scan` found in one file.
    package struct Scan: Sendable {
        /// Its records, unless they were handed on block by block (`scan(_:blocks:)`).
        package var records: [ScannedRecord] = []
        /// Where the last valid block or record ends: past it lies a torn tail, if anything.
        package var validLength = 0
        /// Runs of bytes that are neither blocks nor records, before `validLength`.
        package var damagedRanges: [Range<Int>] = []
        /// The newest sequence among the records (0 when there are none).
        package var latestSequence: UInt64 = 0
    }

    /// Reads the whole file in order and checks every block and record
    /// (checksum included: a flipped bit in an expiry or a key must not go
    /// unseen). After bytes that are neither it looks for the next magic, so
    /// a damaged block costs only its own records.
    /// - Complexity: O(file length), read in large sequential chunks.
    package static func scan(_ file: SegmentFile) throws(StorageError) -> Scan {
        let length = file.length
        guard let bytes = file.read(offset: 0, length: length) else {
            throw .fileOperation("Reading a segment file", path: file.path, errno: errno)
        }
        return scan(bytes)
    }

    /// `scan` of a file's bytes.
    package static func scan(_ bytes: Data) -> Scan {
        var records: [ScannedRecord] = []
        var scan = scan(bytes) { block in
            for index in block.keys.records.indices {
                records.append(ScannedRecord(
                    header: block.keys.header(index), offset: block.offset, index: index, length: Int(block.keys.records[index].share)
                ))
            }
        }
        scan.records = records
        return scan
    }

    /// `scan` of a file's bytes, handing each valid block to `take` as it is
    /// read instead of keeping its records: an open takes what it needs of a
    /// block on the core that read it, while the block is in that core's cache.
    /// `verification` says how much of each block is checked (a clean open
    /// checks the keys alone, `SegmentBlock.Verification`).
    package static func scan(_ bytes: Data, verifying verification: SegmentBlock.Verification = .block, blocks take: (ScannedBlock) -> Void) -> Scan {
        var scan = Scan()
        bytes.withUnsafeBytes { raw in
            var offset = 0
            var damageStart: Int?
            // Every block is read into this one, in the storage it has (`BlockKeys.read`).
            var keys = BlockKeys()
            while offset + 4 <= raw.count {
                let rest = UnsafeRawBufferPointer(rebasing: raw[offset...])
                if let length = readValidBlockOrRecord(at: rest, into: &keys, verifying: verification) {
                    if let start = damageStart { scan.damagedRanges.append(start ..< offset) }
                    damageStart = nil
                    for record in keys.records { scan.latestSequence = max(scan.latestSequence, record.sequence) }
                    take(ScannedBlock(offset: offset, keys: keys))
                    offset += length
                    scan.validLength = offset
                } else {
                    if damageStart == nil { damageStart = offset }
                    offset = nextMagic(in: raw, after: offset) ?? raw.count
                }
            }
        }
        return scan
    }

    /// Reads the valid block, or the valid record of version 2, at the start
    /// of `bytes` into `keys`, and returns its length; nil when there is
    /// none (`keys` is then unspecified). Only a block's keys are
    /// decompressed; `verification` says whether its values' bytes are checked.
    private static func readValidBlockOrRecord(
        at bytes: UnsafeRawBufferPointer, into keys: inout BlockKeys, verifying verification: SegmentBlock.Verification
    ) -> Int? {
        if let length = SegmentBlock.blockLength(at: bytes) {
            guard length <= bytes.count, (try? keys.read(UnsafeRawBufferPointer(rebasing: bytes[..<length]), verifying: verification)) != nil else {
                return nil
            }
            return length
        }
        guard let length = EntryFile.recordLength(at: bytes), length <= bytes.count else { return nil }
        let record = UnsafeRawBufferPointer(rebasing: bytes[..<length])
        guard let header = try? EntryFile.decodeHeader(record, fileLength: length), (try? EntryFile.verifyChecksum(record)) != nil else { return nil }
        keys = BlockKeys(headers: [header], shares: [length])
        return length
    }

    /// The next offset after `offset` where a block's or a record's magic begins.
    private static func nextMagic(in raw: UnsafeRawBufferPointer, after offset: Int) -> Int? {
        var position = offset + 1
        while position + 4 <= raw.count {
            let word = UnsafeRawBufferPointer(rebasing: raw[position ..< position + 4])
            if SegmentBlock.startsBlock(word) || word.elementsEqual(EntryFile.magic) { return position }
            position += 1
        }
        return nil
    }
}
