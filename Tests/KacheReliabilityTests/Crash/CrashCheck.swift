import Foundation
import KacheCrashHarness
@testable import Kache

/// Reopens a directory after the harness was killed and checks it against the
/// model: it opens without error, no temporary file survives, every key holds
/// a state the journal allows (exact bytes, never torn or foreign), the Queue
/// holds every promised item once and in order, and nothing is damaged.
struct CrashCheck {
    /// What one check found; `problems` is empty when the run passed.
    struct Outcome {
        var problems: [String] = []
        var keysRead = 0
        var valuesFound = 0
        var queueItems = 0
        /// Promised values or items that were missing: what a crash lost.
        var lost = 0
    }

    let directory: URL

    /// Checks the directory after `run`, and settles `model` to what was found.
    func check(_ run: CrashModel.Run, model: inout CrashModel) -> Outcome {
        var outcome = Outcome()
        outcome.problems += run.failures + run.corruptions.map { "the harness read foreign bytes: \($0)" }
        let cache: Kache
        let spaces: (pool: Kache.Pool, smallPool: Kache.Pool, queue: Kache.Queue)
        do {
            cache = try Kache(directory: directory, configuration: CrashLayout.configuration(durability: .sync))
            spaces = try CrashLayout.keySpaces(of: cache)
        } catch {
            outcome.problems.append("reopening failed: \(error)")
            return outcome
        }
        defer { try? cache.close() }
        let listing = DirectoryListing(root: directory)
        if !listing.temporaryFiles.isEmpty {
            outcome.problems.append("temporary files survived the reopen: \(listing.temporaryFiles)")
        }
        cache.checkInvariants()
        model.remember(run)
        checkStrictKeys(cache: cache, pool: spaces.pool, run: run, model: &model, outcome: &outcome)
        checkSmallPool(spaces.smallPool, model: model, outcome: &outcome)
        checkQueue(spaces.queue, run: run, outcome: &outcome)
        let statistics = cache.statistics
        if statistics.quarantined != 0 {
            outcome.problems.append("\(statistics.quarantined) files were damaged after a kill")
        }
        // Files of their own that the index does not list (records in segments
        // that hold nothing live are dead bytes, reclaimed later, not orphans).
        do {
            let unindexed = try CacheDirectory(url: directory).inspect().summary.unindexedFiles
            if unindexed != 0 {
                outcome.problems.append("\(unindexed) entry files on disk that the index does not list (orphaned files)")
            }
        } catch {
            outcome.problems.append("inspecting the reopened directory failed: \(error)")
        }
        cache.checkInvariants()
        return outcome
    }

    private func checkStrictKeys(cache: Kache, pool: Kache.Pool, run: CrashModel.Run, model: inout CrashModel, outcome: inout Outcome) {
        let keys = CrashLayout.topLevelKeys.map { EntryID(space: "", key: $0) }
            + CrashLayout.poolKeys.map { EntryID(space: CrashLayout.poolName, key: $0) }
        for id in keys {
            let start = CrashClock.now()
            let data = id.space.isEmpty ? cache.data(forKey: id.key) : pool.data(forKey: id.key)
            let end = CrashClock.now()
            outcome.keysRead += 1
            let allowed = model.allowedStates(of: id, in: run)
            guard let data else {
                if allowed.contains(where: { $0.version == nil || $0.mayHaveExpired(byReadEnding: end) }) {
                    model.settle(id, to: .absent)
                } else {
                    outcome.lost += 1
                    outcome.problems.append("\(id) is missing; it must hold one of \(allowed.map(describe))")
                }
                continue
            }
            outcome.valuesFound += 1
            guard let version = CrashValues.version(of: data, space: id.space, key: id.key) else {
                outcome.problems.append("\(id) holds \(data.count) bytes that are no value ever set for it (torn or foreign)")
                continue
            }
            if let state = allowed.first(where: { $0.version == version && $0.mayBeLive(atReadStarting: start) }) {
                model.settle(id, to: state)
            } else if !allowed.contains(where: { $0.version == version }), model.everSet[id]?.contains(version) ?? false {
                // Every version newer than the promised one is allowed: one set
                // before it is a predecessor, served in place of an acknowledged write.
                outcome.lost += 1
                outcome.problems.append("\(id) holds version \(version), older than the acknowledged one; it must hold one of \(allowed.map(describe))")
            } else {
                outcome.problems.append("\(id) holds version \(version); it must hold one of \(allowed.map(describe))")
            }
        }
    }

    /// The Pool that evicts: whatever it holds must be a value once set for that key.
    private func checkSmallPool(_ pool: Kache.Pool, model: CrashModel, outcome: inout Outcome) {
        if pool.count > CrashLayout.smallPoolCapacity {
            outcome.problems.append("\(pool.name) holds \(pool.count) keys, over its capacity \(CrashLayout.smallPoolCapacity)")
        }
        for key in CrashLayout.smallPoolKeys {
            outcome.keysRead += 1
            guard let data = pool.data(forKey: key) else { continue }
            outcome.valuesFound += 1
            let id = EntryID(space: pool.name, key: key)
            guard let version = CrashValues.version(of: data, space: pool.name, key: key),
                  model.everSet[id]?.contains(version) ?? false
            else {
                outcome.problems.append("\(id) holds \(data.count) bytes that are no value set for it")
                continue
            }
        }
    }

    /// Pops every item: each one pushed, none twice, in push order, every
    /// promised one there and none whose pop was promised.
    private func checkQueue(_ queue: Kache.Queue, run: CrashModel.Run, outcome: inout Outcome) {
        let expected = run.queue.expectations(cut: run.promisedBefore)
        outcome.problems += expected.outOfOrder
        let count = queue.count
        var items: [UInt64] = []
        while let data = queue.pop() {
            guard let item = CrashValues.itemNumber(of: data, queue: queue.name) else {
                outcome.problems.append("\(queue.name) returned \(data.count) bytes that are no item (torn or foreign)")
                continue
            }
            items.append(item)
        }
        outcome.queueItems += items.count
        if items.count != count { outcome.problems.append("\(queue.name) said it held \(count) items but gave \(items.count)") }
        let order = Dictionary(uniqueKeysWithValues: run.queue.pushed.enumerated().map { ($1, $0) })
        let positions = items.map { order[$0] }
        if positions.contains(where: { $0 == nil }) {
            outcome.problems.append("\(queue.name) returned items never pushed in this run: \(items.filter { order[$0] == nil })")
        } else if positions.map({ $0! }) != positions.map({ $0! }).sorted() || Set(items).count != items.count {
            outcome.problems.append("\(queue.name) returned items out of order or twice: \(items)")
        }
        let missing = expected.required.filter { !items.contains($0) }
        if !missing.isEmpty {
            outcome.lost += missing.count
            outcome.problems.append("\(queue.name) lost promised items \(missing)")
        }
        let resurrected = items.filter { expected.forbidden.contains($0) }
        if !resurrected.isEmpty {
            outcome.problems.append("\(queue.name) returned items already popped: \(resurrected)")
        }
    }

    private func describe(_ state: EntryState) -> String {
        guard let version = state.version else { return "nothing" }
        return "version \(version) expiring in \(state.earliestExpiry)...\(state.latestExpiry)"
    }
}

/// Wall-clock nanoseconds, read the way the harness reads them.
enum CrashClock {
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
