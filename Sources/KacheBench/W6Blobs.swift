import Foundation
import Kache
import KacheStorage
import KacheWorkloads

/// W6 blobs: incompressible 256 KiB values set into an empty cache, then
/// gets uniform over them. Floors: raw LZ4 compression of the same values,
/// and decompression in the same read order.
///
/// In the disk modes the memory budget is the default 64 MiB, smaller than
/// the 500 MB set, as it would be for images: most reads then come from the
/// files (``memoryBudget(bytesSet:)`` keeps that fraction in a quick run).
/// In `memory` durability it is 1 GiB, which holds them all.
///
/// In the disk modes a second result follows: the same workload with a disk
/// budget of half the bytes it sets (``W6DiskBudget``).
struct W6Blobs {
    let context: BenchContext

    func run(_ durability: Durability) throws -> [WorkloadResult] {
        let operations = context.inputs.blobOperations()
        let budgeted = durability == .memory ? nil : W6DiskBudget(context: context, operations: operations)
        let configuration = context.configuration(
            durability, memoryBudget: durability == .memory ? BenchCache.roomyMemoryBudget : Self.memoryBudget(bytesSet: operations.bytesSet)
        )
        let bytesSet = Double(operations.bytesSet)
        var recorder = FigureRecorder()
        var budgetRecorder = FigureRecorder()

        for run in 1...context.runs {
            let label = { (phase: String?) in context.label(.w6, durability, run: run, phase: phase) }
            let cache = try BenchCache.openEmpty(configuration, in: context.workspace)
            let pass = try Self.measure(cache, operations, context: context, label: label(nil))
            record(pass, durability: durability, into: &recorder)
            let usage = try BenchCache.close(cache, in: context.workspace, recording: &recorder)
            if durability != .memory {
                recorder.record("file bytes ÷ bytes set", Double(usage.fileBytes) / bytesSet, unit: .ratio, higherIsBetter: false)
                recorder.record("allocated ÷ bytes set", Double(usage.allocatedBytes) / bytesSet, unit: .ratio, higherIsBetter: false)
            }

            let floor = context.timed(label("baseline"), total: operations.reads.count, unit: "gets") {
                Baselines.lz4(values: operations.values, reads: operations.reads, progress: context.progress)
            }
            if durability != .memory {
                // Only the disk modes compress; in memory a value is kept as given.
                recorder.compare("MB/s written", with: Baselines.lz4Compress, bytesSet / 1e6 / floor.compress)
                recorder.compare("MB/s read", with: Baselines.lz4Decompress, pass.bytesRead / 1e6 / floor.decompress)
            }
            let codec = Self.measureCodec(operations, compressionThreshold: configuration.compressionThreshold)
            recorder.record("MB/s encoded, no file", bytesSet / 1e6 / codec.encode, unit: .megabytesPerSecond)
            recorder.compare("MB/s encoded, no file", with: Baselines.lz4Compress, bytesSet / 1e6 / floor.compress)
            recorder.record("MB/s decoded, no file", Double(codec.bytesDecoded) / 1e6 / codec.decode, unit: .megabytesPerSecond)
            recorder.compare("MB/s decoded, no file", with: Baselines.lz4Decompress, Double(codec.bytesDecoded) / 1e6 / floor.decompress)

            if let budgeted {
                try budgeted.measure(durability, run: run, unbounded: pass, into: &budgetRecorder)
            }
        }
        var results = [WorkloadResult(
            workload: .w6, durability: durability, threads: 1, memoryBudget: configuration.memoryBudget,
            figures: recorder.figures,
            notes: [BenchCache.budgetNote(configuration), "MB = 10⁶ bytes; \(Format.grouped(operations.values.count)) blobs, \(Format.bytes(bytesSet)) set"]
        )]
        if let budgeted { results.append(budgeted.result(durability, figures: budgetRecorder.figures)) }
        return results
    }

    /// The memory budget in the disk modes: the default 64 MiB for the
    /// standard 500 MiB of blobs, and the same fraction of a smaller set (a
    /// `--quick` run's 25 MiB would otherwise fit in memory whole, and its
    /// reads would never touch a file).
    static func memoryBudget(bytesSet: Int) -> Int {
        let standard = WorkloadSizes.standard.blobCount * WorkloadSizes.standard.blobBytes
        let budget = Kache.Configuration().memoryBudget
        return bytesSet >= standard ? budget : Int(Double(budget) * Double(bytesSet) / Double(standard))
    }

    /// What one pass of the workload measured.
    struct Pass {
        var setSeconds: Double
        var savedSeconds: Double
        var readSeconds: Double
        var bytesSet: Double
        var bytesRead: Double
        var hits: Int
        var reads: Int
    }

    /// Sets every blob, saves, then gets them in the read order.
    static func measure(_ cache: Kache, _ operations: BlobOperations, context: BenchContext, label: String) throws -> Pass {
        let ttl = context.inputs.ttl
        let progress = context.progress
        let (setSeconds, savedSeconds) = try context.timed(label + " · sets", total: operations.keys.count, unit: "sets") {
            let start = MonotonicClock.now()
            for index in operations.keys.indices {
                try cache.set(operations.values[index], forKey: operations.keys[index], ttl: ttl)
                progress.advance(by: 1)
            }
            let set = MonotonicClock.now()
            try cache.save()
            return (MonotonicClock.seconds(from: start, to: set), MonotonicClock.seconds(from: start, to: MonotonicClock.now()))
        }
        var bytesRead = 0
        var hits = 0
        let readSeconds = context.timed(label + " · gets", total: operations.reads.count, unit: "gets") {
            MonotonicClock.measure {
                for read in operations.reads {
                    if let value = cache.data(forKey: operations.keys[read]) {
                        bytesRead += value.count
                        hits += 1
                    }
                    progress.advance(by: 1)
                }
            }.seconds
        }
        return Pass(
            setSeconds: setSeconds, savedSeconds: savedSeconds, readSeconds: readSeconds,
            bytesSet: Double(operations.bytesSet), bytesRead: Double(bytesRead), hits: hits, reads: operations.reads.count
        )
    }

    /// Times Kache's own codec on the same values, in memory: encoding each
    /// into its file's bytes in the set order, then decoding in the read
    /// order. The gap between this and the floor is the framing, the
    /// checksum and the copies; the gap between this and the figures above
    /// is the files. Each result is dropped at once, as the floor reuses its
    /// buffer: keeping 500 MB of results would time fresh pages, not the codec.
    static func measureCodec(_ operations: BlobOperations, compressionThreshold: Int) -> (encode: Double, decode: Double, bytesDecoded: Int) {
        func encode(_ index: Int) -> Data {
            EntryCodec.encode(operations.values[index], forKey: operations.keys[index], compressionThreshold: compressionThreshold)
        }
        var bytesEncoded = 0
        let encodeSeconds = MonotonicClock.measure {
            for index in operations.keys.indices { bytesEncoded &+= encode(index).count }
        }.seconds
        let files = operations.keys.indices.map(encode)
        var bytesDecoded = 0
        let decodeSeconds = MonotonicClock.measure {
            for read in operations.reads { bytesDecoded += EntryCodec.decode(files[read])?.count ?? 0 }
        }.seconds
        // Uses the encoded lengths, so the optimizer can't drop the encoding.
        precondition(bytesEncoded > 0)
        return (encodeSeconds, decodeSeconds, bytesDecoded)
    }

    private func record(_ pass: Pass, durability: Durability, into recorder: inout FigureRecorder) {
        recorder.record("MB/s written", pass.bytesSet / 1e6 / pass.setSeconds, unit: .megabytesPerSecond)
        if durability != .memory {
            recorder.record("durable MB/s written", pass.bytesSet / 1e6 / pass.savedSeconds, unit: .megabytesPerSecond)
        }
        recorder.record("MB/s read", pass.bytesRead / 1e6 / pass.readSeconds, unit: .megabytesPerSecond)
        recorder.record("hit ratio", Double(pass.hits) / Double(pass.reads), unit: .ratio)
    }
}
