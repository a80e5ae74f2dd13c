import Foundation
import Kache
import KacheWorkloads

/// What one peer measured in one run, in the units of Kache's figures.
struct PeerMeasurement {
    /// The baseline's name (``PeerStore/name``).
    var name: String
    /// The library and its version.
    var version: String
    /// Sets per second, the clock stopped when the durable point returned.
    var durableSetsPerSecond: Double
    /// The folder's allocated bytes after the close, over the raw bytes of the values set.
    var allocatedPerRaw: Double
    /// Milliseconds from opening the closed store until a get could be made.
    var msToReady: Double
}

/// The peers that W1 and W8 run beside Kache (issue 32): the stores users
/// would otherwise choose, in the same run, on the same keys, values and
/// expiries, each in the baselines' folder after Kache's run.
enum PeerRun {
    /// RocksDB, then SQLite.
    static var stores: [any PeerStore.Type] { [RocksDBPeer.self, SQLitePeer.self] }

    /// Which keys W1's peers read back after their reopen: every 100th, as W8 reads.
    static let checkStride = 100

    /// Whether the peers run beside a workload in `durability`. They hand
    /// each set to the file system unsynced and flush once at the end, which
    /// is what Kache does in `async` and `sync`; in `fsync` Kache flushes
    /// every set, and they would not.
    static func applies(to durability: Durability, in context: BenchContext) -> Bool {
        context.peers && (durability == .async || durability == .sync)
    }

    /// Runs every peer on the sets, each in the emptied baselines' folder.
    static func measureAll(
        _ workload: WorkloadID, _ durability: Durability, run: Int, context: BenchContext,
        keys: [String], values: [Data], expiries: (Int) -> Int64, rawBytes: Int, checkStride: Int
    ) throws -> [PeerMeasurement] {
        try stores.map { store in
            let folder = try context.workspace.resetFloor()
            return try context.timed(context.label(workload, durability, run: run, phase: store.name), total: keys.count, unit: "sets") {
                try measure(store, keys: keys, values: values, expiries: expiries, rawBytes: rawBytes,
                            checkStride: checkStride, folder: folder, progress: context.progress)
            }
        }
    }

    /// Sets every value into a new `Store` in `folder` and makes them durable
    /// (timed), closes it and measures the folder, then opens it again
    /// (timed) and reads back every `checkStride`-th key.
    /// - Throws: ``PeerFailure`` when a C call fails, or when a key read back
    ///   is missing or differs: a peer that kept less than it was given would
    ///   otherwise look fast.
    static func measure<Store: PeerStore>(
        _ store: Store.Type, keys: [String], values: [Data], expiries: (Int) -> Int64, rawBytes: Int,
        checkStride: Int, folder: String, progress: ProgressLine
    ) throws -> PeerMeasurement {
        let loaded = try Store(folder: folder)
        let start = MonotonicClock.now()
        for index in keys.indices {
            try loaded.set(values[index], forKey: keys[index], expiry: expiries(index))
            if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { progress.advance(by: ProgressLine.stride) }
        }
        try loaded.makeDurable()
        let seconds = MonotonicClock.seconds(from: start, to: MonotonicClock.now())
        try loaded.close()
        let usage = FileTree.usage(of: folder)

        let (reopened, ready) = try MonotonicClock.measure { try Store(folder: folder) }
        var missing = 0
        var wrong = 0
        var checked = 0
        for index in stride(from: 0, to: keys.count, by: checkStride) {
            checked += 1
            guard let entry = try reopened.entry(forKey: keys[index]) else {
                missing += 1
                continue
            }
            if entry != PeerEntry(value: values[index], expiry: expiries(index)) { wrong += 1 }
        }
        guard missing == 0, wrong == 0 else {
            throw PeerFailure(peer: Store.name, call: "reading back after the reopen",
                              message: "of \(checked) keys, \(missing) were missing and \(wrong) read back other bytes")
        }
        let version = reopened.version
        try reopened.close()
        return PeerMeasurement(
            name: Store.name, version: version, durableSetsPerSecond: Double(keys.count) / seconds,
            allocatedPerRaw: BenchCache.allocatedPerRaw(usage, rawBytes: rawBytes), msToReady: ready * 1000
        )
    }

    /// Adds this run's peer figures beside Kache's durable sets/s, allocated
    /// ÷ raw bytes and ms to ready, which must have been recorded first.
    static func record(_ measurements: [PeerMeasurement], into recorder: inout FigureRecorder) {
        for peer in measurements {
            recorder.compare("durable sets/s", with: peer.name, peer.durableSetsPerSecond)
            recorder.compare("allocated ÷ raw bytes", with: peer.name, peer.allocatedPerRaw)
            recorder.compare("ms to ready", with: peer.name, peer.msToReady)
        }
    }

    /// The note of a result the peers ran beside, naming their versions.
    static func note(_ measurements: [PeerMeasurement], checkStride: Int) -> String {
        "peers: " + measurements.map(\.version).joined(separator: " and ")
            + ", on the same keys, values and expiries through their C APIs; after each reopen, "
            + (checkStride == 1 ? "every key" : "1 key in \(Format.grouped(checkStride))") + " read back equal"
    }
}
