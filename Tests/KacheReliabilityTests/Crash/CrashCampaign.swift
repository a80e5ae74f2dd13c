import Foundation
import KacheCrashHarness
import KacheTestSupport
import KacheWorkloads

/// Runs the crash harness on one directory again and again, killing it with
/// SIGKILL at a random moment each time and checking the directory after
/// every kill (`CrashCheck`). The model carries over from kill to kill, so
/// damage left by one run would show in a later one too.
///
/// With `powerCut`, the directory lies on powercutfs and every kill comes
/// with a power cut: what was not flushed is lost, half the time with a torn
/// tail of unsynced pages kept; the harness writes in `fsync`, `sync` and
/// `async` durability alike, and the check holds each to its power-cut promise
/// (`CrashStop.powerCut`).
struct CrashCampaign {
    /// Totals over the whole campaign, for docs/RELIABILITY.md.
    struct Figures: CustomStringConvertible {
        var powerCuts = false
        var kills = 0
        var fsyncRuns = 0
        var syncRuns = 0
        var asyncRuns = 0
        var tornCuts = 0
        var killedBeforeOpen = 0
        var acknowledged = 0
        var keysRead = 0
        var valuesFound = 0
        var queueItems = 0
        var lost = 0
        var seconds = 0.0

        var description: String {
            let runs = powerCuts
                ? "\(kills) power cuts (\(fsyncRuns) fsync, \(syncRuns) sync, \(asyncRuns) async; \(tornCuts) keeping torn pages; "
                : "\(kills) kills (\(syncRuns) sync, \(asyncRuns) async, "
            return runs + "\(killedBeforeOpen) before the cache was open), "
                + "\(acknowledged) acknowledged operations, \(keysRead) keys read back (\(valuesFound) values), "
                + "\(queueItems) Queue items, \(lost) lost, in \(String(format: "%.1f", seconds)) s"
        }
    }

    let directory: URL
    let journalFolder: URL
    let seed: UInt64
    /// The file system to cut the power of, which holds `directory`; nil for kills alone.
    var powerCut: PowerCutFileSystem?

    /// Runs `kills` cycles; stops at the first cycle that finds a problem and returns it.
    func run(kills: Int) throws -> (figures: Figures, problems: [String]) {
        var random = SplitMix64(seed: seed)
        var model = CrashModel()
        model.stop = powerCut == nil ? .kill : .powerCut
        var figures = Figures(powerCuts: powerCut != nil)
        let started = Date()
        for cycle in 0 ..< kills {
            let runSeed = (seed &* 10_007 &+ UInt64(cycle)) & (1 << 40 - 1)
            let durability = powerCut == nil
                ? (random.next() % 4 == 0 ? "async" : "sync")
                : ["fsync", "sync", "async"][Int(random.next() % 3)]
            let journalPath = journalFolder.appendingPathComponent("journal-\(cycle).txt").path
            let harness = try ChildProcess.harness(
                ["write", directory.path, "\(runSeed)", durability, "2", "30"], outputPath: journalPath,
                environment: powerCut?.harnessEnvironment ?? [:]
            )
            // One kill in ten lands anywhere from the start (often while the cache opens);
            // the rest while it writes, up to 150 ms after it opened.
            if random.next() % 10 == 0 {
                usleep(UInt32(random.next() % 40_000))
            } else {
                guard harness.waitForLine(startingWith: "open", timeout: .seconds(20)) != nil else {
                    try harness.kill()
                    return (figures, ["cycle \(cycle): the harness did not open the directory: \(harness.output().suffix(500))"])
                }
                usleep(UInt32(random.next() % 150_000))
            }
            try harness.kill()
            let killedAt = CrashClock.now()
            if let powerCut {
                // Nothing runs between the kill and the cut: the harness is reaped.
                let tornSeed = random.next() % 2 == 0 ? random.next() : nil
                try powerCut.cut(keepingTornPagesWith: tornSeed)
                try powerCut.mount()
                if tornSeed != nil { figures.tornCuts += 1 }
            }
            let lines = JournalLine.parse(harness.output())
            let run = model.replay(lines, killedAt: killedAt)
            let outcome = CrashCheck(directory: directory).check(run, model: &model)
            // What the check wrote (a rebuilt manifest, a cut torn tail) is the next run's start.
            try powerCut?.sync()
            figures.kills += 1
            if run.durability == nil { figures.killedBeforeOpen += 1 }
            switch durability {
            case "fsync": figures.fsyncRuns += 1
            case "async": figures.asyncRuns += 1
            default: figures.syncRuns += 1
            }
            figures.acknowledged += run.acknowledged
            figures.keysRead += outcome.keysRead
            figures.valuesFound += outcome.valuesFound
            figures.queueItems += outcome.queueItems
            figures.lost += outcome.lost
            if !outcome.problems.isEmpty {
                figures.seconds = Date().timeIntervalSince(started)
                let kept = keepEvidence(journalPath: journalPath, cycle: cycle)
                let header = "cycle \(cycle) (seed \(runSeed), \(durability)); journal and directory kept in \(kept):"
                return (figures, [header] + outcome.problems)
            }
            try? FileManager.default.removeItem(atPath: journalPath)
        }
        figures.seconds = Date().timeIntervalSince(started)
        return (figures, [])
    }

    /// Copies a failing cycle's journal and the directory (as the check left
    /// it) out of the scratch folder, which is removed after the test.
    private func keepEvidence(journalPath: String, cycle: Int) -> String {
        let kept = FileManager.default.temporaryDirectory.appendingPathComponent("kache-crash-failure-\(seed)-\(cycle)")
        try? FileManager.default.createDirectory(at: kept, withIntermediateDirectories: true)
        try? FileManager.default.copyItem(atPath: journalPath, toPath: kept.appendingPathComponent("journal.txt").path)
        try? FileManager.default.copyItem(at: directory, to: kept.appendingPathComponent("cache"))
        return kept.path
    }
}
