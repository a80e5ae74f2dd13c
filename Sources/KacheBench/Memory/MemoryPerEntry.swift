import Foundation

/// The figures `kache-bench memory` derives from one probe (or the median of
/// several): pure arithmetic, so that it is tested apart from any process.
struct MemoryPerEntry: Equatable, Sendable {
    var entries: Int
    var meanKeyBytes: Double
    var memoryBudget: Int
    var bytesInMemory: Int
    var residentAtStart: Int
    var residentAfterSets: Int
    var residentAfterSave: Int
    var peakResident: Int
    var peakDuringSave: Int

    init(outcome: MemoryProbeOutcome) {
        entries = outcome.entries
        meanKeyBytes = outcome.meanKeyBytes
        memoryBudget = outcome.memoryBudget
        bytesInMemory = outcome.bytesInMemory
        residentAtStart = outcome.residentAtStart
        residentAfterSets = outcome.residentAfterSets
        residentAfterSave = outcome.residentAfterSave
        peakResident = outcome.peakResident
        peakDuringSave = outcome.peakDuringSave
    }

    /// What the index costs per live entry: resident memory after `save()`
    /// beyond what the process held once the cache was open and beyond the
    /// values' own bytes.
    var bytesPerEntry: Double {
        guard entries > 0 else { return 0 }
        return Double(residentAfterSave - residentAtStart - bytesInMemory) / Double(entries)
    }

    /// `bytesPerEntry` less the keys' own UTF-8 bytes.
    var bytesBeyondKey: Double { bytesPerEntry - meanKeyBytes }

    /// The most resident memory may be after the sets and after `save()`:
    /// the memory budget, the index at the ceiling of bytes per entry (and
    /// the keys' bytes), and `slack` for the runtime and everything else.
    func residentCeiling(ceilingBeyondKey: Double, slack: Int) -> Int {
        memoryBudget + Int((ceilingBeyondKey + meanKeyBytes) * Double(entries)) + slack
    }

    /// How far above the RSS after `save()` its peak may go (issue 32): a
    /// save streams what it writes rather than building it whole, so its peak
    /// stays about the same at any number of entries.
    static let saveHeadroom = 16 << 20

    struct Check: Equatable {
        var met: Bool
        var text: String
    }

    func checks(ceilingBeyondKey: Double, slack: Int) -> [Check] {
        let ceiling = residentCeiling(ceilingBeyondKey: ceilingBeyondKey, slack: slack)
        return [
            Check(met: bytesBeyondKey <= ceilingBeyondKey,
                  text: String(format: "index bytes per entry beyond the key %.1f ≤ %.0f", bytesBeyondKey, ceilingBeyondKey)),
            Check(met: residentAfterSets <= ceiling,
                  text: "RSS after the sets \(Self.mebibytes(residentAfterSets)) ≤ budget + index at the ceiling + 30 MB = \(Self.mebibytes(ceiling))"),
            Check(met: residentAfterSave <= ceiling,
                  text: "RSS after save() \(Self.mebibytes(residentAfterSave)) ≤ \(Self.mebibytes(ceiling))"),
            Check(met: peakDuringSave - residentAfterSave <= Self.saveHeadroom,
                  text: "peak while save() ran \(Self.mebibytes(peakDuringSave)) ≤ RSS after it + \(Self.mebibytes(Self.saveHeadroom))"),
        ]
    }

    func table(title: String, floor: MemoryPerEntry) -> String {
        let rows: [(String, String)] = [
            ("live entries", "\(entries)"),
            ("values in memory", Self.mebibytes(bytesInMemory) + " of a " + Self.mebibytes(memoryBudget) + " budget"),
            ("RSS once open", Self.mebibytes(residentAtStart)),
            ("RSS after the sets", Self.mebibytes(residentAfterSets)),
            ("RSS after save()", Self.mebibytes(residentAfterSave)),
            ("peak RSS", Self.mebibytes(peakResident)),
            ("  while save() ran", Self.mebibytes(peakDuringSave)),
            ("index B/entry", String(format: "%.1f", bytesPerEntry)),
            ("  beyond the key", String(format: "%.1f (keys %.1f B)", bytesBeyondKey, meanKeyBytes)),
            ("floor [String: (Int64, Int32)] B/entry", String(format: "%.1f, beyond the key %.1f", floor.bytesPerEntry, floor.bytesBeyondKey)),
            ("  ratio", String(format: "%.2f×", floor.bytesPerEntry > 0 ? bytesPerEntry / floor.bytesPerEntry : 0)),
        ]
        let width = rows.map(\.0.count).max() ?? 0
        return ([title] + rows.map { "  " + $0.0.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + $0.1 }).joined(separator: "\n")
    }

    /// The run with the median index cost (so that every figure shown is from one run).
    static func median(_ runs: [MemoryPerEntry]) -> MemoryPerEntry {
        precondition(!runs.isEmpty, "at least one run")
        return runs.sorted { $0.bytesPerEntry < $1.bytesPerEntry }[runs.count / 2]
    }

    static func mebibytes(_ bytes: Int) -> String {
        String(format: "%.1f MiB", Double(bytes) / 1_048_576)
    }
}
