import Foundation
import KacheWorkloads
import Testing
@testable import KacheBench

/// The peers keep what they are given: a baseline that stored nothing would
/// look fast, and Kache's ratio to it would mean nothing.
@Suite("The peers, RocksDB and SQLite")
struct PeerTests {
    @Test func rocksDBKeepsEverySetAcrossAReopen() throws {
        try expectKeepsEverySet(RocksDBPeer.self, versionPrefix: "RocksDB 7.")
    }

    @Test func sqliteKeepsEverySetAcrossAReopen() throws {
        try expectKeepsEverySet(SQLitePeer.self, versionPrefix: "SQLite 3.")
    }

    /// A store that keeps nothing fails the run rather than giving figures.
    @Test func aPeerThatLosesItsSetsFailsTheRun() throws {
        let folder = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let sets = ManySmallSets(count: 100, valueBytes: 200)
        #expect(throws: PeerFailure.self) {
            try PeerRun.measure(ForgetfulPeer.self, keys: sets.keys, values: sets.values, expiries: { Int64($0) },
                                rawBytes: sets.rawBytes, checkStride: 10, folder: folder.path, progress: ProgressLine(shown: false))
        }
    }

    @Test func peerFailuresCarryTheLibrarysMessage() throws {
        let absent = "/nonexistent-\(UUID().uuidString)/folder"
        let failure = try #require(throws: PeerFailure.self) { try SQLitePeer(folder: absent) }
        #expect(failure.description.hasPrefix("SQLite: sqlite3_open_v2 failed: unable to open database file"), "\(failure)")
    }

    /// 1,000 of W8's entries, each under its own expiry, through the run's own
    /// loop (which reads every key back after a reopen), then once more from a
    /// fresh open, byte for byte; an overwrite keeps only the last value.
    private func expectKeepsEverySet<Store: PeerStore>(_ store: Store.Type, versionPrefix: String) throws {
        let folder = try Self.scratchFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let sets = ManySmallSets(count: 1_000, valueBytes: 200)
        let expiry = { (index: Int) in 1_800_000_000_000_000_000 + sets.ttlSeconds[index] * 1_000_000_000 }
        let measured = try PeerRun.measure(
            Store.self, keys: sets.keys, values: sets.values, expiries: expiry, rawBytes: sets.rawBytes,
            checkStride: 1, folder: folder.path, progress: ProgressLine(shown: false)
        )
        #expect(measured.name == Store.name && measured.version.hasPrefix(versionPrefix), "\(measured.version)")
        #expect(measured.durableSetsPerSecond > 0 && measured.msToReady > 0)
        #expect(measured.allocatedPerRaw > 0.01 && measured.allocatedPerRaw < 100, "the folder holds the entries: \(measured.allocatedPerRaw)")

        let reopened = try Store(folder: folder.path)
        for index in sets.keys.indices {
            let entry = try #require(try reopened.entry(forKey: sets.keys[index]), "\(sets.keys[index])")
            #expect(entry.value == sets.values[index] && entry.expiry == expiry(index), "\(sets.keys[index])")
        }
        #expect(try reopened.entry(forKey: "key-absent") == nil)
        let replacement = Data("{\"id\":0}".utf8)
        try reopened.set(replacement, forKey: sets.keys[0], expiry: 7)
        try reopened.makeDurable()
        try reopened.close()

        let last = try Store(folder: folder.path)
        #expect(try last.entry(forKey: sets.keys[0]) == PeerEntry(value: replacement, expiry: 7))
        #expect(try last.entry(forKey: sets.keys[1])?.value == sets.values[1])
        try last.close()
    }

    private static func scratchFolder() throws -> URL {
        let folder = BenchProcess.scratchRoot.appendingPathComponent("kache-bench-peer-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        return folder
    }
}

/// A peer that acknowledges every set and keeps none.
private final class ForgetfulPeer: PeerStore {
    static let name = "forgetful"
    var version: String { "forgetful 0" }

    init(folder: String) {}
    func set(_ value: Data, forKey key: String, expiry: Int64) {}
    func makeDurable() {}
    func entry(forKey key: String) -> PeerEntry? { nil }
    func close() {}
}
