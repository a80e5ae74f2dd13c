import Foundation
import Kache
import KacheWorkloads

/// W8 many-small: a million 200-byte text values set in key order into an
/// empty cache, each with its own TTL (60…3,600 s), then `save()`; close,
/// open the same directory anew (the time to ready is that of the
/// initializer), and get every 100th key. Keys lost (nil reads) and wrong
/// values must be 0. A key whose TTL has run out by its read is not lost:
/// the shortest TTL is 60 s, and a million sets on a file per entry take
/// longer than that, so the load notes when it set each key read later, and
/// a key counts as lost only if its TTL had at least a second left at its
/// read; the others are counted apart, as "keys past their TTL".
///
/// Durable sets/s stop the clock when `save()` returns. Floor: the same
/// entries' records appended to one file, then syncfs (``Baselines/append``),
/// which writes the bytes a segment layout writes, with nothing around them.
/// After the final close, what the directory costs: allocated bytes ÷ raw
/// bytes set, and files (the layout of a file per entry needs a million).
/// Only in the disk modes. In `async` and `sync`, the peers (``PeerRun``)
/// then set the same entries, beside Kache's durable sets/s, allocated ÷
/// raw bytes and ms to ready; each reads back the keys Kache read.
struct W8ManySmall {
    let context: BenchContext

    func run(_ durability: Durability) throws -> WorkloadResult? {
        guard durability != .memory else { return nil }
        let sets = context.inputs.manySmallSets()
        let configuration = context.configuration(durability)
        let readStride = context.sizes.manySmallReadStride
        let progress = context.progress
        let count = Double(sets.keys.count)
        var recorder = FigureRecorder()
        var peers: [PeerMeasurement] = []

        for run in 1...context.runs {
            let label = { (phase: String?) in context.label(.w8, durability, run: run, phase: phase) }
            let folder = try context.workspace.resetFloor()
            let now = Baselines.wallClockNanoseconds()
            let floor = try context.timed(label("append baseline"), total: sets.keys.count, unit: "sets") {
                try Baselines.appendWrites(
                    keys: sets.keys, values: sets.values, expiries: { now + sets.ttlSeconds[$0] * 1_000_000_000 }, folder: folder, progress: progress
                )
            }
            _ = try context.workspace.resetFloor()

            let cache = try BenchCache.openEmpty(configuration, in: context.workspace)
            let (visible, durable, setTimes) = try context.timed(label(nil), total: sets.keys.count, unit: "sets") {
                try Self.load(cache, sets, noting: readStride, progress: progress)
            }
            try cache.close()
            recorder.record("sets/s", count / visible, unit: .perSecond)
            recorder.record("durable sets/s", count / durable, unit: .perSecond)
            recorder.compare("durable sets/s", with: Baselines.append, count / floor.seconds)

            ResidentMemory.resetPeak()
            let (reopened, ready) = try MonotonicClock.measure {
                try Kache(directory: context.workspace.cacheDirectory, configuration: configuration)
            }
            var lost = 0
            var wrong = 0
            var pastTTL = 0
            for index in stride(from: 0, to: sets.keys.count, by: readStride) {
                let read = MonotonicClock.now()
                let value = reopened.data(forKey: sets.keys[index])
                let expiry = setTimes[index / readStride] &+ UInt64(sets.ttlSeconds[index]) * 1_000_000_000
                // A second's margin for the wall clock Kache's expiry reads, against the monotonic one here.
                guard expiry > read &+ 1_000_000_000 else {
                    pastTTL += 1
                    continue
                }
                guard let value else {
                    lost += 1
                    continue
                }
                if value != sets.values[index] { wrong += 1 }
            }
            recorder.record("ms to ready", ready * 1000, unit: .milliseconds, higherIsBetter: false)
            recorder.record("keys lost", Double(lost), unit: .count, higherIsBetter: false)
            recorder.record("wrong values", Double(wrong), unit: .count, higherIsBetter: false)
            recorder.record("keys past their TTL", Double(pastTTL), unit: .count, higherIsBetter: false)
            let usage = try BenchCache.close(reopened, in: context.workspace, recording: &recorder)
            BenchCache.recordFootprint(usage, rawBytes: sets.rawBytes, into: &recorder)
            if PeerRun.applies(to: durability, in: context) {
                peers = try PeerRun.measureAll(
                    .w8, durability, run: run, context: context, keys: sets.keys, values: sets.values,
                    expiries: { now + sets.ttlSeconds[$0] * 1_000_000_000 }, rawBytes: sets.rawBytes, checkStride: readStride
                )
                PeerRun.record(peers, into: &recorder)
            }
        }
        let reads = (sets.keys.count + readStride - 1) / readStride
        return WorkloadResult(
            workload: .w8, durability: durability, threads: 1, memoryBudget: configuration.memoryBudget,
            figures: recorder.figures,
            notes: [BenchCache.budgetNote(configuration), "\(Format.grouped(sets.keys.count)) entries, \(Format.bytes(Double(sets.rawBytes))) raw; "
                + "\(Format.grouped(reads)) keys read after the reopen; keys lost and wrong values count those whose TTL had not run out"]
                + (peers.isEmpty ? [] : [PeerRun.note(peers, checkStride: readStride)])
        )
    }

    /// Sets every value in key order with its own TTL, then saves; returns
    /// the seconds to the last set and to the end of the save, and the
    /// monotonic time just before the set of every `noting`-th key.
    static func load(_ cache: Kache, _ sets: ManySmallSets, noting: Int, progress: ProgressLine) throws -> (visible: Double, durable: Double, setTimes: [UInt64]) {
        var setTimes: [UInt64] = []
        setTimes.reserveCapacity(sets.keys.count / noting + 1)
        let start = MonotonicClock.now()
        for index in sets.keys.indices {
            if index % noting == 0 { setTimes.append(MonotonicClock.now()) }
            try cache.set(sets.values[index], forKey: sets.keys[index], ttl: .seconds(sets.ttlSeconds[index]))
            if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { progress.advance(by: ProgressLine.stride) }
        }
        let visible = MonotonicClock.now()
        try cache.save()
        let durable = MonotonicClock.now()
        return (MonotonicClock.seconds(from: start, to: visible), MonotonicClock.seconds(from: start, to: durable), setTimes)
    }
}
