import ArgumentParser
import Foundation
import Kache
import KacheWorkloads

/// What one probe process measured: resident memory around one workload's
/// sets and `save()`, or (`isFloor`) around a plain dictionary of its keys.
struct MemoryProbeOutcome: Codable, Sendable {
    var workload: String
    var durability: String
    var isFloor: Bool
    var entries: Int
    var meanKeyBytes: Double
    var memoryBudget: Int
    var bytesInMemory: Int
    /// Resident bytes once the cache is open (or, for the floor, before the dictionary).
    var residentAtStart: Int
    var residentAfterSets: Int
    var residentAfterSave: Int
    var peakResident: Int
    /// The peak while `save()` ran (0 for the floor, which saves nothing).
    var peakDuringSave: Int
}

/// `kache-bench memory-probe` (hidden): one measurement in a fresh process,
/// so that no earlier allocation sits in the heap; prints one JSON line.
/// `kache-bench memory` runs it and summarises.
struct MemoryProbeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "memory-probe",
        abstract: "One run of `kache-bench memory`, in its own process (used by `memory`).",
        shouldDisplay: false
    )

    @Option var workload: MemoryWorkload
    @Option var durability: DurabilitySelection
    @Option var dir: String
    @Flag var floor = false

    func run() throws {
        let outcome = floor ? MemoryProbe.floor(workload) : try MemoryProbe.cache(workload, durability.modes[0], directory: URL(fileURLWithPath: dir))
        let json = try JSONEncoder().encode(outcome)
        print(String(decoding: json, as: UTF8.self))
    }
}

/// The two workloads issue 21 measures, generated on the fly (a million
/// values held as inputs would be resident too, and counted).
enum MemoryWorkload: String, CaseIterable, ExpressibleByArgument, Sendable {
    case w1 = "W1", w8 = "W8"

    init?(argument: String) { self.init(rawValue: argument.uppercased()) }

    var count: Int { self == .w1 ? WorkloadSizes.standard.keyCount : WorkloadSizes.standard.manySmallCount }
    var valueBytes: Int { self == .w1 ? WorkloadSizes.standard.textValueBytes : WorkloadSizes.standard.manySmallValueBytes }
    /// The budgets of issue 21's measurements: 64 MiB for 100,000 × 1 KiB, 16 MiB for 1,000,000 × 200 B.
    var memoryBudget: Int { self == .w1 ? 64 << 20 : 16 << 20 }

    /// Calls `body` with each key, value and TTL in WORKLOADS.md's order.
    func forEachSet(_ body: (String, Data, Int64) throws -> Void) rethrows {
        var rng = SplitMix64(seed: SplitMix64.defaultSeed, thread: 0)
        for index in 0 ..< count {
            let value = WorkloadValues.text(index: index, byteCount: valueBytes, using: &rng)
            let ttl = self == .w8 ? WorkloadDraws.manySmallTTLSeconds(&rng) : WorkloadSizes.standard.ttlSeconds
            try body(WorkloadKeys.key(index), value, ttl)
        }
    }
}

enum MemoryProbe {
    static func cache(_ workload: MemoryWorkload, _ durability: Durability, directory: URL) throws -> MemoryProbeOutcome {
        try? FileManager.default.removeItem(at: directory)
        let configuration = BenchCache.configuration(durability, memoryBudget: workload.memoryBudget)
        let cache = durability == .memory
            ? try Kache(inMemory: configuration)
            : try Kache(directory: directory, configuration: configuration)
        ResidentMemory.resetPeak()
        let start = ResidentMemory.currentBytes() ?? 0
        var keyBytes = 0
        try workload.forEachSet { key, value, ttl in
            keyBytes += key.utf8.count
            try cache.set(value, forKey: key, ttl: .seconds(ttl))
        }
        let afterSets = ResidentMemory.currentBytes() ?? 0
        let peakOfSets = ResidentMemory.peakBytes() ?? 0
        ResidentMemory.resetPeak()
        try cache.save()
        let peakDuringSave = ResidentMemory.peakBytes() ?? 0
        let afterSave = ResidentMemory.currentBytes() ?? 0
        let statistics = cache.statistics
        defer { try? cache.close() }
        return MemoryProbeOutcome(
            workload: workload.rawValue, durability: durability.rawValue, isFloor: false, entries: statistics.entries,
            meanKeyBytes: Double(keyBytes) / Double(max(workload.count, 1)), memoryBudget: workload.memoryBudget,
            bytesInMemory: statistics.bytesInMemory, residentAtStart: start, residentAfterSets: afterSets,
            residentAfterSave: afterSave, peakResident: max(peakOfSets, peakDuringSave), peakDuringSave: peakDuringSave
        )
    }

    /// The least an index of these keys could cost: a dictionary from each
    /// key to an expiry and a length, built the same way.
    static func floor(_ workload: MemoryWorkload) -> MemoryProbeOutcome {
        ResidentMemory.resetPeak()
        let start = ResidentMemory.currentBytes() ?? 0
        var keyBytes = 0
        var floor: [String: (Int64, Int32)] = [:]
        workload.forEachSet { key, value, ttl in
            keyBytes += key.utf8.count
            floor[key] = (ttl, Int32(value.count))
        }
        let resident = ResidentMemory.currentBytes() ?? 0
        return withExtendedLifetime(floor) {
            MemoryProbeOutcome(
                workload: workload.rawValue, durability: "none", isFloor: true, entries: floor.count,
                meanKeyBytes: Double(keyBytes) / Double(max(workload.count, 1)), memoryBudget: 0, bytesInMemory: 0,
                residentAtStart: start, residentAfterSets: resident, residentAfterSave: resident,
                peakResident: ResidentMemory.peakBytes() ?? 0, peakDuringSave: 0
            )
        }
    }
}
