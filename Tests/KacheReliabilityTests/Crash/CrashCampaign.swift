import Foundation
import KacheCrashHarness
import KacheTestSupport
import KacheWorkloads

/// Runs the crash harness on one directory again and again, killing it with
/// SIGKILL at a random moment each time and checking the directory after
/// every kill (`CrashCheck`). The model carries over from kill to kill, so
/// damage left by one run would show in a later one too.
struct CrashCampaign {
    /// Totals over the whole campaign, for docs/RELIABILITY.md.
    struct Figures: CustomStringConvertible {
        var kills = 0
        var syncRuns = 0
        var asyncRuns = 0
        var killedBeforeOpen = 0
        var acknowledged = 0
        var keysRead = 0
        var valuesFound = 0
        var queueItems = 0
        var lost = 0
        var seconds = 0.0

        var description: String {
            "\(kills) kills (\(syncRuns) sync, \(asyncRuns) async, \(killedBeforeOpen) before the cache was open), "
                + "\(acknowledged) acknowledged operations, \(keysRead) keys read back (\(valuesFound) values), "
                + "\(queueItems) Queue items, \(lost) lost, in \(String(format: "%.1f", seconds)) s"
        }
    }

    let directory: URL
    let journalFolder: URL
    let seed: UInt64

    /// Runs `kills` cycles; stops at the first cycle that finds a problem and returns it.
    func run(kills: Int) throws -> (figures: Figures, problems: [String]) {
        var random = SplitMix64(seed: seed)
        var model = CrashModel()
        var figures = Figures()
        let started = Date()
        for cycle in 0 ..< kills {
            let runSeed = (seed &* 10_007 &+ UInt64(cycle)) & (1 << 40 - 1)
            let durability = random.next() % 4 == 0 ? "async" : "sync"
            let journalPath = journalFolder.appendingPathComponent("journal-\(cycle).txt").path
            let harness = try ChildProcess.harness(["write", directory.path, "\(runSeed)", durability, "2", "30"], outputPath: journalPath)
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
            let lines = JournalLine.parse(harness.output())
            let run = model.replay(lines, killedAt: killedAt)
            let outcome = CrashCheck(directory: directory).check(run, model: &model)
            figures.kills += 1
            if run.durability == nil { figures.killedBeforeOpen += 1 }
            if durability == "async" { figures.asyncRuns += 1 } else { figures.syncRuns += 1 }
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
