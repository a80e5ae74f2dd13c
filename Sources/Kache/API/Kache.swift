import Foundation
import KacheStorage
import Logging

/// An expiring key-value cache: values in memory up to a byte budget, every
/// value also on disk in an LZ4-compressed, checksummed record (small ones
/// packed into segment files, large ones in files of their own), each with a
/// time to live.
///
/// A network client stores a response when it arrives and looks in the cache
/// before it asks the network again:
///
/// ```swift
/// let cache = Kache.shared
/// if let cached = cache.data(forKey: url.absoluteString) { return cached }
/// let (data, _) = try await session.data(from: url)
/// try cache.set(data, forKey: url.absoluteString, ttl: .seconds(3600))
/// ```
///
/// An instance is `Sendable`: use it from any thread or task. One process at a
/// time may write to a directory; a second gets ``KacheError/directoryLocked(path:holderPID:)``.
public final class Kache: Sendable {
    /// The settings this instance was opened with.
    public let configuration: Configuration
    /// The cache directory, or nil in `memory` durability.
    public let directory: URL?

    let store: Store
    /// The store's entry index, for reads from memory, which take only a shard lock.
    let index: EntryIndex
    /// Where every version's bytes live; nil in `memory` durability.
    let records: RecordStore?
    /// Tasks waiting for a Queue's next push (`queue.items`).
    let queueWaiters = QueueWaiters()
    /// Which gets and sets are timed, for a metrics reporter (`sampleLatencies`).
    let latencies = LatencySampler()
    let defaultPoolIndex: Int
    let defaultQueueIndex: Int
    var disk: DiskStore? { records?.disk }
    var writeBehind: WriteBehind? { records?.writeBehind }
    var clock: any WallClock { configuration.clock }

    /// The name of the Pool behind ``defaultPool``.
    public static let defaultPoolName = "default-pool"
    /// The name of the Queue behind ``defaultQueue``.
    public static let defaultQueueName = "default-queue"

    /// Opens (or creates) the cache in `directory`.
    ///
    /// Opening restores every entry and key space without reading payloads:
    /// from the manifest when it is current, otherwise from the entry files'
    /// headers. Files left half-written by a crash are removed; damaged files
    /// are moved to `quarantine/`; entries that expired meanwhile are deleted.
    ///
    /// - Throws: ``KacheError/directoryLocked(path:holderPID:)`` when another
    ///   writer holds the directory, ``KacheError/directoryUnusable(path:reason:)``
    ///   when it can't be created or written, ``KacheError/invalidConfiguration(_:)``.
    public init(directory: URL, configuration: Configuration = Configuration()) throws {
        let configuration = try configuration.validated()
        let keepsFiles = configuration.durability != .memory
        let disk = keepsFiles
            ? try storage { () throws(StorageError) in
                try DiskStore(
                    root: directory.standardizedFileURL.path, syncsEveryWrite: configuration.durability == .fsync,
                    segmentLength: Kache.segmentLength(diskBudget: configuration.diskBudget)
                )
            }
            : nil
        let queuedBytes = configuration.durability == .async && disk != nil ? QueuedBytes() : nil
        let store = Store(StoreState(
            memoryLimit: configuration.memoryBudget, keepsFiles: keepsFiles,
            diskBudget: configuration.diskBudget, allocationUnit: disk?.allocationUnit ?? 4096,
            segmentThreshold: configuration.segmentThreshold, writeBehindBytes: queuedBytes, segments: disk?.segments
        ))
        do {
            (defaultPoolIndex, defaultQueueIndex) = try store.withLock { state throws(KacheError) in
                (try state.keySpace(named: Kache.defaultPoolName, kind: .pool, capacity: configuration.defaultPoolCapacity).index,
                 try state.keySpace(named: Kache.defaultQueueName, kind: .queue, capacity: configuration.defaultQueueCapacity).index)
            }
        } catch {
            disk?.close()
            throw error
        }
        self.configuration = configuration
        self.store = store
        index = store.withLock { $0.index }
        self.directory = disk == nil ? nil : directory
        records = disk.map { disk in
            RecordStore(
                disk: disk, index: StoreRecordIndex(store: store), logger: configuration.logger,
                segmentThreshold: configuration.segmentThreshold,
                blockCompression: configuration.blockCompression == .high ? .high : .fast,
                writeBehindLimit: configuration.durability == .async ? max(configuration.memoryBudget / 2, 4 << 20) : nil,
                queuedBytes: queuedBytes ?? QueuedBytes(), compactionThreshold: configuration.compactionThreshold,
                now: { [clock = configuration.clock] in clock.nanosecondsSince1970() }
            )
        }
        do {
            try restoreIndex(atOpen: true)
        } catch {
            abandon()
            throw error
        }
    }

    /// Undoes a failed `init`, whose `deinit` runs next: marks the cache closed
    /// (so `deinit` writes nothing), stops the writer thread and releases the
    /// lock, each exactly once.
    private func abandon() {
        store.withLock { $0.isClosed = true }
        records?.stop()
        disk?.close()
    }

    /// Creates a cache that lives in memory only (`memory` durability).
    public convenience init(inMemory configuration: Configuration = Configuration()) throws {
        var configuration = configuration
        configuration.durability = .memory
        try self.init(directory: URL(fileURLWithPath: "/dev/null"), configuration: configuration)
    }

    /// The process-wide cache, opened on first use in `$KACHE_DIR`, else
    /// `$XDG_CACHE_HOME/kache`, else `~/.cache/kache`, with the default
    /// configuration (`async` durability).
    ///
    /// Its disk budget is 1 GiB. If that directory can't be opened (another
    /// process writes to it, or it is not writable), `shared` logs why and works
    /// in memory only; its ``directory`` is then nil.
    public static let shared: Kache = {
        let directory = defaultDirectory()
        do {
            return try Kache(directory: directory, configuration: Configuration(diskBudget: 1 << 30))
        } catch {
            Logger(label: "kache").error("Kache.shared can't open \(directory.path) (\(error)); using memory only")
            return try! Kache(inMemory: Configuration())
        }
    }()

    /// The directory `shared` uses: `$KACHE_DIR`, else `$XDG_CACHE_HOME/kache`, else `~/.cache/kache`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let dir = environment["KACHE_DIR"], !dir.isEmpty { return URL(fileURLWithPath: dir, isDirectory: true) }
        if let xdg = environment["XDG_CACHE_HOME"], !xdg.isEmpty {
            return URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("kache", isDirectory: true)
        }
        let home = environment["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".cache/kache", isDirectory: true)
    }

    deinit {
        try? close()
    }

    // MARK: - Top-level API

    /// Stores `data` under `key` until `ttl` from now, replacing any value and expiry it had.
    ///
    /// Every `set` first removes every entry whose time has passed (their files too).
    ///
    /// - Throws: ``KacheError/emptyKey``, ``KacheError/keyTooLong(bytes:limit:)``,
    ///   ``KacheError/invalidTTL(_:)``, ``KacheError/valueTooLarge(bytes:limit:)``,
    ///   and in `sync`/`fsync` durability ``KacheError/diskFull(path:)`` or another
    ///   file error (the previous value then stays). Nothing stored before is lost.
    /// - Complexity: O(log n) plus the file write, plus O(log n) per key swept.
    public func set(_ data: Data, forKey key: String, ttl: Duration) throws {
        try put(data, key: key, keySpace: .topLevel, ttl: ttl)
    }

    /// Stores `data` under `key` for the configuration's `defaultTTL`.
    public func set(_ data: Data, forKey key: String) throws {
        try put(data, key: key, keySpace: .topLevel, ttl: configuration.defaultTTL)
    }

    /// The value stored under `key`, or nil when there is none or it has expired.
    ///
    /// A value not in memory is read from its file, verified and brought into
    /// memory; a damaged file reads as nil and is moved to `quarantine/`.
    /// - Complexity: O(1) from memory: one hash lookup under the lock.
    public func data(forKey key: String) -> Data? {
        fetch(keySpace: .topLevel, key: key)
    }

    /// Whether `key` holds a live value (no file is read).
    public func contains(_ key: String) -> Bool {
        return index.contains(space: StoreState.topLevel, key: key, now: clock.nanosecondsSince1970())
    }

    /// Removes the value stored under `key`, and its file. Does nothing if there is none.
    public func removeValue(forKey key: String) {
        remove(key: key, keySpace: .topLevel)
    }

    /// Removes every entry of every key space (the key spaces stay, empty).
    public func removeAll() {
        changingFiles { removeRecords(of: store.withLock { $0.removeAll(space: nil) }) }
    }

    /// Removes every top-level entry whose key `shouldRemove` picks, and
    /// returns how many went. A tier in front of a shared one uses it to drop
    /// only the keys a lost invalidation may concern (`KacheRedis` drops the
    /// keys of the hash slots whose tracking lapsed).
    /// - Complexity: O(n) over every entry, under the store's lock.
    @discardableResult
    package func removeValues(where shouldRemove: (String) -> Bool) -> Int {
        changingFiles {
            let removals = store.withLock { $0.remove(space: StoreState.topLevel, where: shouldRemove) }
            removeRecords(of: removals)
            return removals.count
        }
    }

    /// Removes every entry whose time has passed, and their files.
    /// - Returns: how many entries expired.
    /// - Complexity: O(log n) per expired entry; never a scan.
    @discardableResult
    public func sweep() -> Int {
        let now = clock.nanosecondsSince1970()
        return changingFiles {
            let removals = store.withLock { $0.sweep(now: now) }
            removeRecords(of: removals)
            return removals.count
        }
    }

    /// Counts and sizes, as of now.
    public var statistics: Statistics {
        let pending = records?.pendingWrites ?? 0
        let written = records?.bytesWritten ?? 0
        let (writeErrors, compactions) = (records?.writeErrors ?? 0, records?.compactions ?? 0)
        let reads = index.readCounts
        return store.withLock { state in
            let segments = state.segments?.withLedger { $0 } ?? SegmentLedger()
            return Statistics(
                memoryHits: reads.memoryHits,
                diskHits: state.counters.diskHits,
                misses: reads.misses + state.counters.misses,
                sets: state.counters.sets,
                expirations: state.counters.expirations,
                evictions: state.counters.evictions,
                memoryEvictions: state.counters.memoryEvictions,
                memoryGhostHits: state.counters.memoryGhostHits,
                quarantined: state.counters.quarantined,
                writeErrors: writeErrors,
                readErrors: state.counters.readErrors,
                entries: state.entryCount,
                entriesInMemory: state.memory.values,
                bytesInMemory: state.memory.bytes,
                memoryBudget: state.memory.limit,
                filesOnDisk: state.budget.files,
                bytesOnDisk: state.budget.fileBytes,
                allocatedBytes: state.budget.charged - segments.liveBytes + segments.allocatedBytes(unit: state.budget.unit),
                reservedBytes: state.keepsFiles ? state.diskUse() - state.budget.charged : 0,
                diskBudget: state.budget.limit,
                budgetEvictions: state.budget.evictions,
                budgetEvictedBytes: state.budget.evictedBytes,
                budgetGhostHits: state.counters.budgetGhostHits,
                segmentFiles: segments.fileCount,
                segmentBytes: segments.totalBytes,
                deadBytes: segments.deadBytes,
                compactions: compactions,
                bytesWritten: written,
                rawBytes: state.rawBytes,
                pendingWrites: pending
            )
        }
    }

    // MARK: - Shared paths of the top level, Pools and Queues

    /// Stores a version of `key` expiring `ttl` after `now`: a reading of the
    /// clock the caller made, for an expiry another tier shares; nil to read it here.
    func put(_ data: Data, key: String, keySpace: KeySpace.Ref, ttl: Duration, now: Timestamp? = nil) throws {
        let started = latencies.start(.set)
        defer { if let started { latencies.finish(.set, since: started) } }
        try changingFiles { try insert(data, key: key, keySpace: keySpace, ttl: ttl, now: now) }
        // In `async` the writer thread reclaims after its batches.
        if let records, records.writeBehind == nil { records.reclaimIfDue() }
    }

    private func insert(_ data: Data, key: String, keySpace: KeySpace.Ref, ttl: Duration, now: Timestamp?) throws {
        guard let pending = try indexVersion(data, key: key, keySpace: keySpace, ttl: ttl, now: now) else { return }
        try carryToDisk(pending)
    }

    /// A version in the index whose record is not on disk yet.
    struct PendingVersion: Sendable {
        var insertion: StoreState.Insertion
        var write: RecordWrite
    }

    /// Validates and inserts a new version of `key` into the index (sweeping,
    /// evicting, charging the budgets), and encodes its record. Call inside
    /// `changingFiles`, then `carryToDisk` the result.
    /// - Returns: the version to write; nil in `memory` durability, where the index is all there is.
    func indexVersion(_ data: Data, key: String, keySpace: KeySpace.Ref, ttl: Duration, now: Timestamp? = nil) throws -> PendingVersion? {
        let space = keySpace.number
        try validate(key: key)
        try validate(value: data)
        guard ttl > .zero else { throw KacheError.invalidTTL(ttl) }
        // Started first, the insert's cache misses overlap the work before it
        // (W8's durable sets/s: +8 % in 20 alternating pairs of runs).
        let hash = index.prefetch(space: space, key: key)
        let now = now ?? clock.nanosecondsSince1970()
        let expiry = now.adding(nanoseconds: ttl.saturatingNanoseconds)
        guard let records else {
            try store.withLock { state throws(KacheError) in
                guard !state.isClosed else { throw .closed }
                _ = state.insert(space: space, key: key, value: data, expiry: expiry, now: now, hash: hash)
            }
            return nil
        }
        let canonicalKey = EntryName.canonical(ifNotASCII: key)
        let keyBytes = canonicalKey?.utf8.count ?? key.utf8.count
        guard keyBytes <= configuration.maximumKeyLength else {
            throw KacheError.keyTooLong(bytes: keyBytes, limit: configuration.maximumKeyLength)
        }
        let version = { (insertion: StoreState.Insertion) in
            RecordVersion(space: space, key: key, sequence: insertion.sequence, indexHandle: insertion.ref.packed)
        }
        // A small entry's record is compressed with its neighbours by the writer; a large one's file here, outside the lock.
        let largestRawLength = SegmentBlock.Record.largestRawLength(
            keyBytes: keyBytes, valueBytes: data.count, spaceBytes: keySpace.name.utf8.count
        )
        let bucket = records.bucket(forLength: largestRawLength, expiry: expiry, now: now)
        let name = bucket == nil ? EntryName(space: keySpace.name, key: key) : nil
        var file = name.map { name in EntryFile.draft(
            name: name, kind: keySpace.kind.rawValue, payload: data, expiry: expiry, compressionThreshold: configuration.compressionThreshold
        ) }
        let length = file?.bytes.count ?? largestRawLength
        let insertion = try store.withLock { state throws(KacheError) in
            guard !state.isClosed else { throw .closed }
            if let limit = state.budget.limit {
                let needed = state.diskUseAlone(fileLength: length, keyBytes: key.utf8.count)
                guard needed <= limit else { throw .exceedsDiskBudget(bytes: needed, budget: limit) }
            }
            return state.insert(space: space, key: key, value: data, expiry: expiry, now: now, fileLength: length, hash: hash)
        }
        let write: RecordWrite
        if let bucket {
            write = RecordWrite(
                version: version(insertion), canonicalKey: canonicalKey, space: keySpace.name, kind: keySpace.kind.rawValue,
                expiry: expiry, value: data, bucket: bucket
            )
        } else {
            file!.seal(sequence: insertion.sequence)
            // Queued for the writer: in a staging block, so that the buffer freed once written leaves no hole.
            write = RecordWrite(version: version(insertion), name: name!, file: records.stage(file!.bytes), rawSize: data.count)
        }
        return PendingVersion(insertion: insertion, write: write)
    }

    /// Writes a version `indexVersion` inserted (queues it in `async`), and
    /// deletes the files of the entries it made leave.
    func carryToDisk(_ pending: PendingVersion) throws {
        guard let records else { return }
        let (insertion, write) = (pending.insertion, pending.write)
        if records.writeBehind != nil {
            records.queue(write, removals: insertion.removals.recordRemovals)
            return
        }
        // The new file first, the victims' files after: if the write fails, the
        // entries it evicted are put back with their files untouched. The budget
        // was charged at insert, so the directory is within it once this returns.
        do {
            try records.write(write)
        } catch {
            // A file in place whose folder did not flush stays, as on disk: the
            // error says the set is not durable; rolling back would leave the
            // previous version pointing at a file that holds this one.
            let landed = store.withLock { state in
                state.record(space: write.version.space, key: write.version.key)
                    .map { $0.sequence == insertion.sequence && !$0.isPendingWrite } ?? false
            }
            if landed {
                records.remove(insertion.removals.recordRemovals)
                throw KacheError(error)
            }
            let trimmed = store.withLock { $0.rollBack(insertion, space: write.version.space, key: write.version.key) }
            // Only the entries that stayed out go (a delete keeps files of keys in the index).
            records.remove(Kache.stayedOut(insertion.removals + trimmed, store: store).recordRemovals)
            throw KacheError(error)
        }
        records.remove(insertion.removals.recordRemovals)
    }

    /// The removals whose key is not back in the index (a rolled-back insert
    /// put some back): only those need a tombstone.
    private static func stayedOut(_ removals: [Removal], store: Store) -> [Removal] {
        store.withLock { state in removals.filter { !state.hasEntry(space: $0.space, key: $0.key) } }
    }

    /// The longest segment file: 4 MiB, or a 16th of a small disk budget, so
    /// that one file's dead bytes never weigh much against the budget.
    static func segmentLength(diskBudget: Int?) -> Int {
        guard let diskBudget else { return 4 << 20 }
        return min(4 << 20, max(64 << 10, diskBudget / 16))
    }

    /// The value of `key`, from memory or its file. `insideChange`: the caller
    /// runs in `changingFiles` already (a Queue's peek), so dropping a damaged
    /// entry must not begin another change.
    func fetch(keySpace: KeySpace.Ref, key: String, insideChange: Bool = false) -> Data? {
        guard let started = latencies.start(.get) else { return readValue(keySpace: keySpace, key: key, insideChange: insideChange) }
        defer { latencies.finish(.get, since: started) }
        return readValue(keySpace: keySpace, key: key, insideChange: insideChange)
    }

    /// `fetch` without its timing.
    func readValue(keySpace: KeySpace.Ref, key: String, insideChange: Bool = false) -> Data? {
        let space = keySpace.number
        let now = clock.nanosecondsSince1970()
        // From memory under the key's shard lock alone; a value on disk is
        // looked up again under the store's lock, which a segment file is
        // retired under, so that the file taken is the one the location names.
        let fast = index.lookup(space: space, key: key, now: now)
        guard case .onDisk = fast else {
            if case let .hit(value) = fast { return value }
            return nil
        }
        guard let records else { return nil }
        let (lookup, file) = store.withLock { state in
            let lookup = state.lookup(space: space, key: key, now: now)
            guard case let .onDisk(_, location) = lookup else { return (lookup, nil as SegmentStore.SegmentFile?) }
            return (lookup, records.segmentFile(for: location))
        }
        switch lookup {
        case let .hit(value):
            return value
        case .miss:
            return nil
        case let .onDisk(sequence, location):
            return readFromDisk(
                RecordVersion(space: space, key: key, sequence: sequence), name: EntryName(space: keySpace.name, key: key),
                at: location, in: file, records: records, insideChange: insideChange
            )
        }
    }

    func remove(key: String, keySpace: KeySpace.Ref) {
        changingFiles {
            guard let removal = store.withLock({ $0.remove(space: keySpace.number, key: key) }) else { return }
            removeRecords(of: [removal])
        }
    }

    /// Runs `body`, an index change and the file work it implies, as one change
    /// under way for `DiskStore`: the manifest is marked stale before the index
    /// changes, and a concurrent `save()` does not call its manifest complete
    /// until the files match. Every path that changes the index goes through here.
    ///
    /// Once `close()` has begun, `body` runs uncounted: it then finds the index
    /// closed and touches nothing.
    func changingFiles<R, E: Error>(_ body: () throws(E) -> R) throws(E) -> R {
        guard let disk, disk.beginChange() else { return try body() }
        defer { disk.endChange() }
        return try body()
    }

    /// Deletes the files of entries that left the index (in the background in
    /// `async`). Call inside `changingFiles`.
    func removeRecords(of removals: [Removal]) {
        guard let records, !removals.isEmpty else { return }
        records.remove(removals.recordRemovals)
    }

    /// The longest file a valid entry can have, in any configuration: a value
    /// stored under a larger `maximumValueSize` than today's is still read,
    /// never taken for damage.
    var maximumFileLength: Int {
        EntryFile.headerSize + 2 * Int(UInt16.max) + EntryFile.maximumPayload
    }

    private func validate(key: String) throws(KacheError) {
        guard !key.isEmpty else { throw .emptyKey }
        let bytes = key.utf8.count
        guard bytes <= configuration.maximumKeyLength else { throw .keyTooLong(bytes: bytes, limit: configuration.maximumKeyLength) }
    }

    private func validate(value: Data) throws(KacheError) {
        guard value.count <= configuration.maximumValueSize else {
            throw .valueTooLarge(bytes: value.count, limit: configuration.maximumValueSize)
        }
    }
}
