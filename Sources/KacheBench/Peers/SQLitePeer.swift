import CSQLite
import Foundation

/// SQLite through its C API, in the shape python-diskcache gives a cache:
/// one table `kv(key TEXT PRIMARY KEY, value BLOB, expiry INTEGER)`, the
/// WAL journal with `synchronous=NORMAL` (a commit reaches the WAL file, a
/// checkpoint syncs), and one autocommit `INSERT OR REPLACE` per set through
/// a statement prepared once. The durable point is a full checkpoint, which
/// syncs the WAL, copies it into the database file and syncs that.
final class SQLitePeer: PeerStore {
    static let name = Baselines.sqlite

    private var db: OpaquePointer?
    private var insert: OpaquePointer?
    private var select: OpaquePointer?

    /// Opens the database as an application would before its first get:
    /// the journal mode, the table if it is missing, and the statements.
    init(folder: String) throws {
        // One thread uses the connection, so SQLite's own mutexes are left out.
        let flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(folder + "/cache.sqlite", &db, flags, nil)
        guard code == SQLITE_OK else { throw failure("sqlite3_open_v2", code) }
        let mode = try text(of: "PRAGMA journal_mode=WAL")
        guard mode == "wal" else {
            throw PeerFailure(peer: "SQLite", call: "PRAGMA journal_mode=WAL", message: "the journal mode stayed \(mode ?? "unset")")
        }
        try execute("PRAGMA synchronous=NORMAL")
        try execute("CREATE TABLE IF NOT EXISTS kv(key TEXT PRIMARY KEY, value BLOB, expiry INTEGER)")
        insert = try prepare("INSERT OR REPLACE INTO kv(key, value, expiry) VALUES (?1, ?2, ?3)")
        select = try prepare("SELECT value, expiry FROM kv WHERE key = ?1")
    }

    deinit {
        sqlite3_finalize(insert)
        sqlite3_finalize(select)
        sqlite3_close_v2(db)
    }

    func set(_ value: Data, forKey key: String, expiry: Int64) throws {
        // The bytes are bound without a copy (a nil destructor is SQLITE_STATIC):
        // the statement runs before the closures return.
        let code = withUTF8Bytes(of: key) { key in
            value.withUnsafeBytes { value in
                var code = sqlite3_bind_text(insert, 1, key.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(key.count), nil)
                if code == SQLITE_OK { code = sqlite3_bind_blob(insert, 2, value.baseAddress, Int32(value.count), nil) }
                if code == SQLITE_OK { code = sqlite3_bind_int64(insert, 3, expiry) }
                if code == SQLITE_OK { code = sqlite3_step(insert) }
                return code
            }
        }
        defer { sqlite3_reset(insert) }
        guard code == SQLITE_DONE else { throw failure("INSERT OR REPLACE", code) }
    }

    func makeDurable() throws {
        var logFrames: Int32 = 0
        var copiedFrames: Int32 = 0
        let code = sqlite3_wal_checkpoint_v2(db, nil, SQLITE_CHECKPOINT_FULL, &logFrames, &copiedFrames)
        guard code == SQLITE_OK else { throw failure("sqlite3_wal_checkpoint_v2(FULL)", code) }
        guard logFrames == copiedFrames else {
            throw PeerFailure(peer: "SQLite", call: "sqlite3_wal_checkpoint_v2(FULL)", message: "copied \(copiedFrames) of the WAL's \(logFrames) frames")
        }
    }

    func entry(forKey key: String) throws -> PeerEntry? {
        defer { sqlite3_reset(select) }
        let code = withUTF8Bytes(of: key) { key in
            let code = sqlite3_bind_text(select, 1, key.baseAddress?.assumingMemoryBound(to: CChar.self), Int32(key.count), nil)
            return code == SQLITE_OK ? sqlite3_step(select) : code
        }
        switch code {
        case SQLITE_DONE:
            return nil
        case SQLITE_ROW:
            let count = Int(sqlite3_column_bytes(select, 0))
            let value = sqlite3_column_blob(select, 0).map { Data(bytes: $0, count: count) } ?? Data()
            return PeerEntry(value: value, expiry: sqlite3_column_int64(select, 1))
        default:
            throw failure("SELECT", code)
        }
    }

    var version: String { "SQLite " + String(cString: sqlite3_libversion()) }

    func close() throws {
        sqlite3_finalize(insert)
        sqlite3_finalize(select)
        (insert, select) = (nil, nil)
        let code = sqlite3_close(db)
        guard code == SQLITE_OK else { throw failure("sqlite3_close", code) }
        db = nil
    }

    // MARK: - Statements

    private func prepare(_ sql: String) throws -> OpaquePointer? {
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v2(db, sql, -1, &statement, nil)
        guard code == SQLITE_OK else { throw failure(sql, code) }
        return statement
    }

    /// Runs a statement that returns no row.
    private func execute(_ sql: String) throws {
        let code = sqlite3_exec(db, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw failure(sql, code) }
    }

    /// Runs a statement and returns the text of its first row's first column.
    private func text(of sql: String) throws -> String? {
        let statement = try prepare(sql)
        defer { sqlite3_finalize(statement) }
        let code = sqlite3_step(statement)
        guard code == SQLITE_ROW || code == SQLITE_DONE else { throw failure(sql, code) }
        return code == SQLITE_ROW ? sqlite3_column_text(statement, 0).map { String(cString: $0) } : nil
    }

    /// The failure of `call`, with SQLite's message for the connection (or
    /// for the code, where there is no connection).
    private func failure(_ call: String, _ code: Int32) -> PeerFailure {
        let message = db.map { String(cString: sqlite3_errmsg($0)) } ?? String(cString: sqlite3_errstr(code))
        return PeerFailure(peer: "SQLite", call: call, message: "\(message) (code \(code))")
    }
}
