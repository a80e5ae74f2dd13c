import Foundation
import KacheCrashHarness

/// One entry (key space and key) of the crash workload.
struct EntryID: Hashable, CustomStringConvertible {
    var space: String
    var key: String
    var description: String { space.isEmpty ? key : "\(space)/\(key)" }
}

/// What a key may hold: a version of its value with the window in which it
/// expires, or nothing.
struct EntryState: Equatable {
    /// The version stored, nil for no entry.
    var version: UInt64?
    /// The expiry lies in `earliestExpiry ... latestExpiry` (wall-clock ns):
    /// the set took its clock reading somewhere between its journal lines.
    var earliestExpiry: Int64
    var latestExpiry: Int64

    static let absent = EntryState(version: nil, earliestExpiry: .max, latestExpiry: .max)

    /// Whether a read that ended at `end` could have found this state expired.
    func mayHaveExpired(byReadEnding end: Int64) -> Bool {
        version != nil && earliestExpiry - CrashModel.clockMargin <= end
    }

    /// Whether a read that started at `start` could have found this state live.
    func mayBeLive(atReadStarting start: Int64) -> Bool {
        version != nil && latestExpiry + CrashModel.clockMargin > start
    }
}

/// How a run of the harness ends, which decides what it promised.
enum CrashStop {
    /// SIGKILL: the page cache survives, so whatever a `sync` or `fsync` call
    /// handed to the file system is kept; `async` promises what a completed
    /// `save()` made durable.
    case kill
    /// SIGKILL and a power cut at the same moment (`PowerCutTests`): only what
    /// was flushed survives. `fsync` promises every acknowledged operation;
    /// `sync` and `async` promise what a completed `save()` made durable.
    case powerCut
}

/// The reference model of the crash test: what the directory must hold after
/// a run of the harness that was killed, given its journal.
///
/// It is carried from run to run: after each run the test reads every key,
/// checks it against `allowedStates`, and makes what it read the base of the
/// next run (`settle`).
struct CrashModel {
    /// How each run ends.
    var stop = CrashStop.kill

    /// Tolerance between the harness's clock readings and the library's
    /// (the library rounds through `Double`; both read CLOCK_REALTIME).
    static let clockMargin: Int64 = 2_000_000

    /// What each key held when the run started (absent when missing).
    private(set) var base: [EntryID: EntryState] = [:]
    /// Every version ever begun for each key, for the Pool that evicts.
    private(set) var everSet: [EntryID: Set<UInt64>] = [:]

    /// One state-changing operation of a run on one key, in journal order.
    struct KeyOperation {
        var begin: Int
        var ack: Int?
        var outcome: EntryState
    }

    /// A run's journal, replayed.
    struct Run {
        var durability: String?
        var operations: [EntryID: [KeyOperation]] = [:]
        /// Journal index of the last `save()` that returned (its begin line), if any.
        var lastCompletedSave: Int?
        /// Journal index before which every acknowledged operation is promised
        /// (`Int.max` when all of them are), given the durability and how the run ended.
        var promisedBefore = Int.max
        var queue = QueueHistory()
        var failures: [String] = []
        var corruptions: [String] = []
        var acknowledged = 0
    }

    /// Replays `lines`; `killedAt` bounds the expiry of a set the kill interrupted.
    func replay(_ lines: [JournalLine], killedAt: Int64) -> Run {
        var run = Run()
        var begun: [UInt64: (index: Int, at: Int64, operation: JournalLine.Operation)] = [:]
        var pendingSaves: [UInt64: Int] = [:]
        for (index, line) in lines.enumerated() {
            switch line {
            case let .opened(_, durability, _):
                run.durability = durability
            case let .begin(id, at, operation):
                begun[id] = (index, at, operation)
                switch operation {
                case let .set(space, key, version, ttl):
                    let state = EntryState(version: version, earliestExpiry: at + ttl, latestExpiry: killedAt + ttl)
                    run.operations[EntryID(space: space, key: key), default: []].append(KeyOperation(begin: index, outcome: state))
                case let .remove(space, key):
                    run.operations[EntryID(space: space, key: key), default: []].append(KeyOperation(begin: index, outcome: .absent))
                case let .push(_, item, _):
                    run.queue.begin(push: item, at: index)
                case .pop:
                    run.queue.begin(popAt: index)
                case .save:
                    pendingSaves[id] = index
                case .sweep:
                    break
                }
            case let .ack(id, at, popped):
                guard let started = begun[id] else { continue }
                run.acknowledged += 1
                switch started.operation {
                case let .set(space, key, _, ttl):
                    run.acknowledge(EntryID(space: space, key: key), begin: started.index, ack: index, latestExpiry: at + ttl)
                case let .remove(space, key):
                    run.acknowledge(EntryID(space: space, key: key), begin: started.index, ack: index, latestExpiry: nil)
                case .push:
                    run.queue.acknowledgePush(begunAt: started.index, at: index)
                case .pop:
                    run.queue.acknowledgePop(begunAt: started.index, at: index, item: popped)
                case .save:
                    if let saveIndex = pendingSaves[id] { run.lastCompletedSave = saveIndex }
                case .sweep:
                    break
                }
            case let .failure(id, _, error):
                run.failures.append("operation \(id) (\(begun[id].map { "\($0.operation)" } ?? "open/close")) threw: \(error)")
            case let .corruption(message):
                run.corruptions.append(message)
            }
        }
        let promisesEverything = switch stop {
        case .kill: run.durability != "async"
        case .powerCut: run.durability == nil || run.durability == "fsync"
        }
        run.promisedBefore = promisesEverything ? Int.max : run.lastCompletedSave ?? -1
        return run
    }

    /// The states `id` may be found in after `run` was killed.
    ///
    /// Where every acknowledged operation is promised (`sync` and `fsync`
    /// after a kill, `fsync` after a power cut) the key holds the outcome of
    /// its last acknowledged operation, or of the one the kill interrupted.
    /// Otherwise only what was acknowledged before the last completed
    /// `save()` is promised: the key holds the outcome of the last operation
    /// acknowledged before it, or of any later one.
    /// A version set before the promised one is never allowed: served after a
    /// kill, it is an acknowledged write lost (`CrashCheck` counts it so).
    func allowedStates(of id: EntryID, in run: Run) -> [EntryState] {
        let operations = run.operations[id] ?? []
        let promised = operations.lastIndex { $0.ack.map { $0 < run.promisedBefore } ?? false }
        let promisedState = promised.map { operations[$0].outcome } ?? base[id] ?? .absent
        let later = operations[(promised.map { $0 + 1 } ?? 0)...].map(\.outcome)
        return [promisedState] + later
    }

    /// Records what a key was found holding after a run, as the next run's base.
    mutating func settle(_ id: EntryID, to state: EntryState) {
        base[id] = state
    }

    /// Remembers every version `run` began, for the lenient checks.
    mutating func remember(_ run: Run) {
        for (id, operations) in run.operations {
            for operation in operations {
                if let version = operation.outcome.version { everSet[id, default: []].insert(version) }
            }
        }
    }
}

extension CrashModel.Run {
    mutating func acknowledge(_ id: EntryID, begin: Int, ack: Int, latestExpiry: Int64?) {
        guard let position = operations[id]?.lastIndex(where: { $0.begin == begin }) else { return }
        operations[id]![position].ack = ack
        if let latestExpiry { operations[id]![position].outcome.latestExpiry = latestExpiry }
    }
}
