import Foundation
import KacheWorkloads
#if canImport(Glibc)
import Glibc
#endif

/// The floors every figure is read against, run in the same process, on the
/// same inputs, right after the Kache run they pair with.
enum Baselines {
    /// The in-memory floor of W1 in `memory` durability, W2 and W3.
    static let dictionary = "Mutex<[String: Data]>"
    /// The in-memory floor that scales with threads (W2, W3): 64 such dictionaries, a key's chosen by its hash.
    static let shardedDictionary = "64 × Mutex<[String: Data]>"
    /// The baseline of W2's and W3's async figures: the same cache, lists and threads through the sync API.
    static let syncAPI = "the sync API (same run)"
    /// The file-system floor of W1 in `async` and `sync`: POSIX write of a temporary file, then rename.
    static let rename = "temp file + rename"
    /// The same in `fsync` durability: the file's data and its folder are flushed too.
    static let renameFsync = "temp file + fsync + rename + fsync folder"
    /// The file-system floor of W5's reads: open + fstat + read of the same values' files.
    static let fileRead = "open + read of raw files"
    /// The codec floors of W6: liblz4's block API on the same values, no framing.
    static let lz4Compress = "raw LZ4 compress"
    static let lz4Decompress = "raw LZ4 decompress"
    /// The bookkeeping of the 2012 Kache for a Pool (W4).
    static let sortedArray = "sorted array (Kache 2012)"
    /// The append floor of W1 and W8 in the disk modes: the same entries LZ4-compressed
    /// into 48-byte-header records, appended to one file, then syncfs.
    static let append = "LZ4 records appended to one file, then syncfs"
    /// The baseline of W1 on several writer threads in fsync: the same run with
    /// `segmentThreshold = 0`, every entry in a file of its own (the layout before segments).
    static let filePerEntry = "segmentThreshold 0 (a file per entry)"
    /// The baseline of W4d's sets: the same churn in `memory` durability.
    static let churnInMemory = "W4 in memory"
    /// The peers of W1 and W8 in `async` and `sync` (``PeerRun``): the stores
    /// users would otherwise choose, on the same sets.
    static let rocksDB = "RocksDB (LZ4, a Put per set, WAL unsynced, final flush)"
    static let sqlite = "SQLite (WAL, synchronous=NORMAL, an INSERT per set, final checkpoint)"
    static let peers = [rocksDB, sqlite]
    /// The policies W9's hit ratios are read against, simulated over the same
    /// trace with the same capacity in objects (KacheWorkloads' simulators).
    static let fifo = "FIFO"
    static let lru = "LRU"
    static let s3fifo = "S3-FIFO"
    /// Kache's disk budget before S3-FIFO, and a full Pool's rule: read against on trace (c).
    static let earliestExpiry = "earliest expiry"

    /// The rename floor's name with the folder flush that `save()` ends with.
    static func withSyncfs(_ name: String) -> String { name + ", then syncfs" }

    // MARK: - In memory

    /// A dictionary floor holding `values[i]` under `keys[i]` (loaded untimed).
    static func loadedDictionary(keys: [String], values: [Data]) -> MutexDictionaryBaseline {
        let dictionary = MutexDictionaryBaseline(minimumCapacity: keys.count)
        for (key, value) in zip(keys, values) { dictionary.set(value, forKey: key) }
        return dictionary
    }

    /// The sharded floor holding `values[i]` under `keys[i]` (loaded untimed).
    static func loadedShardedDictionary(keys: [String], values: [Data]) -> ShardedDictionaryBaseline {
        let dictionary = ShardedDictionaryBaseline(minimumCapacity: keys.count)
        for (key, value) in zip(keys, values) { dictionary.set(value, forKey: key) }
        return dictionary
    }

    /// Times setting every value into an empty dictionary floor; returns the seconds.
    static func dictionarySets(keys: [String], values: [Data], progress: ProgressLine) -> Double {
        let dictionary = MutexDictionaryBaseline()
        return MonotonicClock.measure {
            for index in keys.indices {
                dictionary.set(values[index], forKey: keys[index])
                if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { progress.advance(by: ProgressLine.stride) }
            }
        }.seconds
    }

    // MARK: - Files

    /// Times writing every value as its key's file, as a fresh floor in
    /// `folder`. Returns the seconds to the last rename, and to the end of a
    /// `syncfs` after it (what `save()` adds in Kache).
    static func renameWrites(keys: [String], values: [Data], folder: String, fsync: Bool, progress: ProgressLine) throws -> (written: Double, synced: Double) {
        let floor = try RenameBaseline(directory: folder, fsync: fsync)
        let start = MonotonicClock.now()
        for index in keys.indices {
            try floor.write(values[index], forKey: keys[index])
            if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { progress.advance(by: ProgressLine.stride) }
        }
        let written = MonotonicClock.now()
        try syncFileSystem(of: folder)
        let synced = MonotonicClock.now()
        return (MonotonicClock.seconds(from: start, to: written), MonotonicClock.seconds(from: start, to: synced))
    }

    /// Times appending every value's record to one file in the fresh floor
    /// folder `folder`, compression included, then `syncfs`. Returns the
    /// seconds to the end of the `syncfs`, and the bytes appended (which
    /// Kache's records of the same entries match).
    static func appendWrites(
        keys: [String], values: [Data], expiries: (Int) -> Int64, folder: String, progress: ProgressLine
    ) throws -> (seconds: Double, bytes: Int) {
        let path = folder + "/records"
        let start = MonotonicClock.now()
        let floor = try AppendBaseline(path: path)
        for index in keys.indices {
            try floor.append(values[index], forKey: keys[index], expiry: expiries(index))
            if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { progress.advance(by: ProgressLine.stride) }
        }
        try floor.close()
        try syncFileSystem(of: folder)
        return (MonotonicClock.seconds(from: start, to: MonotonicClock.now()), floor.bytesAppended)
    }

    /// The wall clock now, in nanoseconds since 1970, as a record's expiry counts time.
    static func wallClockNanoseconds() -> Int64 {
        Int64(Date().timeIntervalSince1970 * 1e9)
    }

    /// Times reading every key's file from a floor written (untimed) in
    /// `folder`; returns the seconds and the keys that read back different bytes.
    static func fileReads(keys: [String], values: [Data], folder: String, progress: ProgressLine) throws -> (seconds: Double, wrong: Int) {
        let floor = try RenameBaseline(directory: folder, fsync: false)
        for index in keys.indices { try floor.write(values[index], forKey: keys[index]) }
        var read: [Data] = []
        read.reserveCapacity(keys.count)
        let seconds = try MonotonicClock.measure {
            for index in keys.indices {
                read.append(try floor.read(forKey: keys[index]))
                if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { progress.advance(by: ProgressLine.stride) }
            }
        }.seconds
        return (seconds, zip(read, values).filter { $0 != $1 }.count)
    }

    /// `syncfs(2)` of the file system holding `path`, as Kache's `save()`
    /// calls it. Looked up at run time, because Swift's Glibc module does not
    /// export it.
    static func syncFileSystem(of path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw FileTree.Failure(call: "open", path: path, code: errno) }
        defer { close(fd) }
        guard let syncfs = Self.syncfs else {
            sync()
            return
        }
        guard syncfs(fd) == 0 else { throw FileTree.Failure(call: "syncfs", path: path, code: errno) }
    }

    private typealias SyncFS = @convention(c) (Int32) -> Int32
    private static let syncfs: SyncFS? = {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "syncfs") else { return nil }
        return unsafeBitCast(symbol, to: SyncFS.self)
    }()

    // MARK: - Codec

    /// Times LZ4-compressing every value, then decompressing them in the order
    /// `reads` gives (each compressed once, untimed). Returns the seconds of each.
    static func lz4(values: [Data], reads: [Int], progress: ProgressLine) -> (compress: Double, decompress: Double) {
        let largest = values.map(\.count).max() ?? 0
        var codec = RawLZ4Baseline(maxRawCount: largest)
        let compress = MonotonicClock.measure {
            for value in values { _ = codec.compressInPlace(value) }
        }.seconds
        let blocks = values.map(RawLZ4Baseline.compress)
        let decompress = MonotonicClock.measure {
            for (index, read) in reads.enumerated() {
                _ = codec.decompressInPlace(blocks[read], rawCount: values[read].count)
                if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { progress.advance(by: ProgressLine.stride) }
            }
        }.seconds
        return (compress, decompress)
    }

    // MARK: - Pool bookkeeping

    /// Drives the 2012 Pool with W4's keys and TTLs on the same simulated
    /// clock (1 ms per set). Stops early, after the set under way, once
    /// `timeLimit` seconds have passed: at capacity 100,000 its O(n) inserts
    /// would take many minutes. Returns the sets done, the seconds, and the
    /// keys it evicted and let expire.
    static func sortedArrayChurn(
        _ operations: ChurnOperations, capacity: Int, timeLimit: Double, progress: ProgressLine
    ) -> (sets: Int, seconds: Double, evictions: Int, expirations: Int) {
        var pool = SortedArrayPool(capacity: capacity)
        var evictions = 0
        var expirations = 0
        var sets = 0
        let start = MonotonicClock.now()
        let deadline = start + UInt64(timeLimit * 1e9)
        for index in operations.keys.indices {
            let now = Int64(index) * 1_000_000
            let removed = pool.set(key: operations.keys[index], expiry: now + operations.ttlSeconds[index] * 1_000_000_000, now: now)
            evictions += removed.evicted.count
            expirations += removed.expired.count
            sets += 1
            if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 {
                progress.advance(by: ProgressLine.stride)
                if MonotonicClock.now() > deadline { break }
            }
        }
        return (sets, MonotonicClock.seconds(from: start, to: MonotonicClock.now()), evictions, expirations)
    }
}
