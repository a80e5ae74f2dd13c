import CRocksDB
import Foundation

/// RocksDB through its C API, as issue 32 compares Kache with it: LZ4 on
/// every level, one `Put` per set with the write-ahead log on and not
/// synced, and a final flush of the memtable (waited for) as the durable
/// point. Everything else is RocksDB's default.
///
/// RocksDB has no expiry of its own per key, so a value is stored behind
/// its expiry (8 bytes, little-endian), as a cache built on RocksDB would
/// have to.
final class RocksDBPeer: PeerStore {
    static let name = Baselines.rocksDB

    private let folder: String
    private var db: OpaquePointer?
    private let writeOptions: OpaquePointer
    private let readOptions: OpaquePointer
    /// The expiry and value of one `Put`, reused from set to set.
    private var record: [UInt8] = []

    init(folder: String) throws {
        self.folder = folder
        guard let options = rocksdb_options_create() else {
            throw PeerFailure(peer: "RocksDB", call: "rocksdb_options_create", message: "out of memory")
        }
        defer { rocksdb_options_destroy(options) }
        rocksdb_options_set_create_if_missing(options, 1)
        rocksdb_options_set_compression(options, Int32(rocksdb_lz4_compression))
        writeOptions = rocksdb_writeoptions_create()
        // Not synced, and the log stays on: each set reaches the page cache, as in Kache's `async`.
        rocksdb_writeoptions_set_sync(writeOptions, 0)
        rocksdb_writeoptions_disable_WAL(writeOptions, 0)
        readOptions = rocksdb_readoptions_create()
        db = try Self.call("rocksdb_open") { rocksdb_open(options, folder, $0) }
    }

    deinit {
        if let db { rocksdb_close(db) }
        rocksdb_writeoptions_destroy(writeOptions)
        rocksdb_readoptions_destroy(readOptions)
    }

    func set(_ value: Data, forKey key: String, expiry: Int64) throws {
        record.removeAll(keepingCapacity: true)
        withUnsafeBytes(of: expiry.littleEndian) { record.append(contentsOf: $0) }
        record.append(contentsOf: value)
        try withUTF8Bytes(of: key) { key in
            try record.withUnsafeBytes { record in
                try Self.call("rocksdb_put") {
                    rocksdb_put(db, writeOptions, key.baseAddress?.assumingMemoryBound(to: CChar.self), key.count,
                                record.baseAddress?.assumingMemoryBound(to: CChar.self), record.count, $0)
                }
            }
        }
    }

    /// Flushes the memtable to a table file and waits: RocksDB syncs the file
    /// and its manifest, after which the unsynced log is no longer needed.
    func makeDurable() throws {
        let flush = rocksdb_flushoptions_create()
        defer { rocksdb_flushoptions_destroy(flush) }
        rocksdb_flushoptions_set_wait(flush, 1)
        try Self.call("rocksdb_flush") { rocksdb_flush(db, flush, $0) }
    }

    func entry(forKey key: String) throws -> PeerEntry? {
        var length = 0
        let bytes = try withUTF8Bytes(of: key) { key in
            try Self.call("rocksdb_get") {
                rocksdb_get(db, readOptions, key.baseAddress?.assumingMemoryBound(to: CChar.self), key.count, &length, $0)
            }
        }
        guard let bytes else { return nil }
        defer { rocksdb_free(bytes) }
        let stored = UnsafeRawBufferPointer(start: bytes, count: length)
        guard stored.count >= 8 else {
            throw PeerFailure(peer: "RocksDB", call: "rocksdb_get", message: "\(key) holds \(stored.count) bytes, fewer than its expiry's 8")
        }
        return PeerEntry(
            value: Data(UnsafeRawBufferPointer(rebasing: stored[8...])),
            expiry: Int64(littleEndian: stored.loadUnaligned(as: Int64.self))
        )
    }

    /// RocksDB's version as its info log states it when the database opens
    /// (the C API does not give it).
    var version: String {
        guard let log = FileHandle(forReadingAtPath: folder + "/LOG") else { return "RocksDB" }
        defer { try? log.close() }
        let head = String(decoding: (try? log.read(upToCount: 4096)) ?? Data(), as: UTF8.self)
        let marker = "RocksDB version: "
        guard let start = head.range(of: marker)?.upperBound else { return "RocksDB" }
        return "RocksDB " + head[start...].prefix { !$0.isWhitespace }
    }

    func close() throws {
        guard let db else { return }
        rocksdb_close(db)
        self.db = nil
    }

    /// Runs a C call that reports failure through `char **errptr`, and throws
    /// its message (which RocksDB allocated, and which is freed here).
    private static func call<Result>(_ name: String, _ body: (UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> Result) throws -> Result {
        var error: UnsafeMutablePointer<CChar>?
        let result = body(&error)
        if let error {
            defer { rocksdb_free(error) }
            throw PeerFailure(peer: "RocksDB", call: name, message: String(cString: error))
        }
        return result
    }
}
