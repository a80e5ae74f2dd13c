import Foundation
import Kache
import KacheWorkloads

/// W1 load: N text values of 1 KiB set in key order into an empty cache.
///
/// Two figures: the sets/s a caller sees, and the durable sets/s, whose clock
/// stops only when a final `save()` returns, so that write-behind can't hide
/// the disk. Floors: the rename of the same values' files (with fsync in
/// `fsync` durability), alone and followed by the syncfs `save()` ends with;
/// the same entries' records appended to one file, then syncfs
/// (``Baselines/append``); in `memory` durability, the dictionary. In the
/// disk modes, also what the directory costs: allocated bytes ÷ raw bytes
/// set, and files; and the time to open it again until a get could be made
/// (ms to ready). In `async` and `sync`, the peers (``PeerRun``) load the
/// same entries after Kache, beside its durable sets/s, allocated ÷ raw
/// bytes and ms to ready.
struct W1Load {
    let context: BenchContext

    func run(_ durability: Durability) throws -> WorkloadResult {
        let keys = context.inputs.loadKeys
        let values = context.inputs.loadValues
        let configuration = context.configuration(durability)
        let count = Double(keys.count)
        var recorder = FigureRecorder()
        var peers: [PeerMeasurement] = []

        for run in 1...context.runs {
            // The floor runs first, and each side starts by deleting its own
            // previous run's files: on ext4 without a journal, creating files
            // right after many deletions is slower (new inodes skip the ones
            // freed recently: `recently_deleted` in fs/ext4/ialloc.c), so neither
            // side may inherit the other's.
            let floorLabel = context.label(.w1, durability, run: run, phase: "baseline")
            let floor: (written: Double, synced: Double)
            var appended = 0.0
            if durability == .memory {
                let seconds = context.timed(floorLabel, total: keys.count, unit: "sets") {
                    Baselines.dictionarySets(keys: keys, values: values, progress: context.progress)
                }
                floor = (seconds, seconds)
            } else {
                // The append floor runs before the rename floor, so that the
                // rename floor's files, not its one file, are what the
                // Kache run follows, as before there was an append floor.
                let appendFolder = try context.workspace.resetFloor()
                let expiry = Baselines.wallClockNanoseconds() + context.sizes.ttlSeconds * 1_000_000_000
                appended = try context.timed(context.label(.w1, durability, run: run, phase: "append baseline"), total: keys.count, unit: "sets") {
                    try Baselines.appendWrites(keys: keys, values: values, expiries: { _ in expiry }, folder: appendFolder, progress: context.progress).seconds
                }
                let folder = try context.workspace.resetFloor()
                floor = try context.timed(floorLabel, total: keys.count, unit: "sets") {
                    try Baselines.renameWrites(keys: keys, values: values, folder: folder, fsync: durability == .fsync, progress: context.progress)
                }
            }

            let cache = try BenchCache.openEmpty(configuration, in: context.workspace)
            let (visible, durable) = try context.timed(context.label(.w1, durability, run: run), total: keys.count, unit: "sets") {
                try Self.load(cache, keys: keys, values: values, ttl: context.inputs.ttl, progress: context.progress)
            }
            recorder.record("sets/s", count / visible, unit: .perSecond)
            if durability == .memory {
                recorder.compare("sets/s", with: Baselines.dictionary, count / floor.written)
            } else {
                let name = durability == .fsync ? Baselines.renameFsync : Baselines.rename
                recorder.record("durable sets/s", count / durable, unit: .perSecond)
                recorder.compare("sets/s", with: name, count / floor.written)
                recorder.compare("durable sets/s", with: name, count / floor.written)
                recorder.compare("durable sets/s", with: Baselines.withSyncfs(name), count / floor.synced)
                recorder.compare("durable sets/s", with: Baselines.append, count / appended)
            }
            let usage = try BenchCache.close(cache, in: context.workspace, recording: &recorder)
            if durability != .memory {
                // The lengths beside the allocated blocks ("bytes on disk"): their
                // gap is what whole 4 KiB blocks cost entries this small.
                recorder.record("file bytes", Double(usage.fileBytes), unit: .bytes, higherIsBetter: false)
                BenchCache.recordFootprint(usage, rawBytes: Self.rawBytes(values), into: &recorder)
                let (reopened, ready) = try MonotonicClock.measure {
                    try Kache(directory: context.workspace.cacheDirectory, configuration: configuration)
                }
                try reopened.close()
                recorder.record("ms to ready", ready * 1000, unit: .milliseconds, higherIsBetter: false)
            }
            if PeerRun.applies(to: durability, in: context) {
                let expiry = Baselines.wallClockNanoseconds() + context.sizes.ttlSeconds * 1_000_000_000
                peers = try PeerRun.measureAll(
                    .w1, durability, run: run, context: context, keys: keys, values: values, expiries: { _ in expiry },
                    rawBytes: Self.rawBytes(values), checkStride: PeerRun.checkStride
                )
                PeerRun.record(peers, into: &recorder)
            }
        }
        return WorkloadResult(
            workload: .w1, durability: durability, threads: 1, memoryBudget: configuration.memoryBudget,
            figures: recorder.figures,
            notes: [BenchCache.budgetNote(configuration)] + (peers.isEmpty ? [] : [PeerRun.note(peers, checkStride: PeerRun.checkStride)])
        )
    }

    /// The bytes of the values, uncompressed.
    static func rawBytes(_ values: [Data]) -> Int {
        values.reduce(0) { $0 + $1.count }
    }

    /// Sets every value in key order, then saves; returns the seconds to the
    /// last set and to the end of the save.
    static func load(_ cache: Kache, keys: [String], values: [Data], ttl: Duration, progress: ProgressLine) throws -> (visible: Double, durable: Double) {
        let start = MonotonicClock.now()
        for index in keys.indices {
            try cache.set(values[index], forKey: keys[index], ttl: ttl)
            if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { progress.advance(by: ProgressLine.stride) }
        }
        let visible = MonotonicClock.now()
        try cache.save()
        let durable = MonotonicClock.now()
        return (MonotonicClock.seconds(from: start, to: visible), MonotonicClock.seconds(from: start, to: durable))
    }
}
