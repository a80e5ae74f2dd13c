import Foundation
import Kache

/// How the workloads open Kache, and what they measure of it at the end.
enum BenchCache {
    /// The memory budget of every workload but W6 on disk: 1 GiB, so that the
    /// workload fits in memory. In `memory` durability the budget bounds the
    /// whole cache, so a smaller one would drop entries; in the disk modes it
    /// keeps W2 and W3 measuring the in-memory path, as their floor does.
    static let roomyMemoryBudget = 1 << 30

    /// A configuration for `durability`.
    static func configuration(
        _ durability: Durability, memoryBudget: Int = roomyMemoryBudget, diskBudget: Int? = nil, clock: any WallClock = SystemClock()
    ) -> Kache.Configuration {
        Kache.Configuration(memoryBudget: memoryBudget, durability: durability, diskBudget: diskBudget, clock: clock)
    }

    /// Opens Kache on an empty cache directory (in memory for `memory`
    /// durability), and resets the process's peak resident memory.
    static func openEmpty(_ configuration: Kache.Configuration, in workspace: Workspace) throws -> Kache {
        let directory = try workspace.resetCache()
        ResidentMemory.resetPeak()
        if configuration.durability == .memory { return try Kache(inMemory: configuration) }
        return try Kache(directory: directory, configuration: configuration)
    }

    /// Closes `cache` (which writes every pending file) and records what the
    /// run left: the bytes its directory occupies (as `du` counts them) and the
    /// process's peak resident memory during the run.
    /// - Returns: the directory's usage (empty in `memory` durability).
    @discardableResult
    static func close(_ cache: Kache, in workspace: Workspace, recording recorder: inout FigureRecorder) throws -> FileTree.Usage {
        try cache.close()
        var usage = FileTree.Usage()
        if cache.configuration.durability != .memory {
            usage = FileTree.usage(of: workspace.cacheDirectory.path)
            recorder.record("bytes on disk", Double(usage.allocatedBytes), unit: .bytes, higherIsBetter: false)
        }
        if let peak = ResidentMemory.peakBytes() {
            recorder.record("peak RSS", Double(peak), unit: .bytes, higherIsBetter: false)
        }
        return usage
    }

    /// Records what the directory costs beside what was set: the blocks it
    /// occupies (as `du` counts them, folders and manifest included) over the
    /// raw bytes of the values set, and the regular files in it.
    static func recordFootprint(_ usage: FileTree.Usage, rawBytes: Int, into recorder: inout FigureRecorder) {
        recorder.record("allocated ÷ raw bytes", allocatedPerRaw(usage, rawBytes: rawBytes), unit: .ratio, higherIsBetter: false)
        recorder.record("files in the directory", Double(usage.files), unit: .count, higherIsBetter: false)
    }

    /// A tree's allocated bytes over the raw bytes of the values set: the
    /// same measure for Kache's directory and for a peer's folder.
    static func allocatedPerRaw(_ usage: FileTree.Usage, rawBytes: Int) -> Double {
        Double(usage.allocatedBytes) / Double(rawBytes)
    }

    /// The note every result of a configuration carries.
    static func budgetNote(_ configuration: Kache.Configuration) -> String {
        var note = "memory budget \(Format.bytes(Double(configuration.memoryBudget)))"
        if let disk = configuration.diskBudget { note += ", disk budget \(Format.bytes(Double(disk)))" }
        if configuration.segmentThreshold != Kache.Configuration().segmentThreshold {
            note += ", segment threshold \(Format.bytes(Double(configuration.segmentThreshold)))"
        }
        if configuration.blockCompression != Kache.Configuration().blockCompression {
            note += ", block compression \(configuration.blockCompression.rawValue)"
        }
        return note
    }
}
