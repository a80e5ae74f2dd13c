import Foundation
import KacheWorkloads
import Kache
import Synchronization

/// `write DIR SEED fsync|sync|async [THREADS] [SECONDS]`: opens the cache directory
/// and changes it at random from THREADS threads (default 2) until killed (or
/// for SECONDS, default 60, then it closes the cache and exits 0), journaling
/// every operation on stdout (see `JournalLine`).
///
/// Each thread owns its own top-level and `crash-pool` keys (key index modulo
/// THREADS), so the operations on one key never overlap and the journal gives
/// their order; thread 0 also owns `crash-small`, the Queue and `save()`. Any
/// thread may `sweep()`. Values are `CrashValues` whose version is
/// `SEED << 24 | n`, unique across runs with distinct seeds.
struct WriteCommand {
    let directory: URL
    let seed: UInt64
    let durability: Durability
    let threads: Int
    let seconds: Double

    init(arguments: [String]) throws(UsageError) {
        guard (3 ... 5).contains(arguments.count), let seed = UInt64(arguments[1]), seed < 1 << 40,
              let durability = Durability(rawValue: arguments[2]), durability != .memory
        else { throw UsageError("write DIR SEED fsync|sync|async [THREADS] [SECONDS]") }
        directory = URL(fileURLWithPath: arguments[0])
        self.seed = seed
        self.durability = durability
        threads = arguments.count > 3 ? Int(arguments[3]) ?? 2 : 2
        seconds = arguments.count > 4 ? Double(arguments[4]) ?? 60 : 60
    }

    func run() -> Int32 {
        let journal = Journal()
        let cache: Kache
        let spaces: (pool: Kache.Pool, smallPool: Kache.Pool, queue: Kache.Queue)
        do {
            cache = try Kache(directory: directory, configuration: CrashLayout.configuration(durability: durability))
            spaces = try CrashLayout.keySpaces(of: cache)
        } catch {
            journal.write(.failure(id: 0, at: Journal.now(), error: "open: \(error)"))
            return 1
        }
        journal.write(.opened(pid: getpid(), durability: durability.rawValue, at: Journal.now()))
        let versions = SharedCounter(seed << 24)
        let stop = SharedFlag()
        let done = DispatchGroup()
        for thread in 0 ..< threads {
            let worker = Worker(
                cache: cache, pool: spaces.pool, smallPool: spaces.smallPool, queue: spaces.queue,
                journal: journal, thread: thread, threads: threads
            )
            let random = SplitMix64(seed: seed &* 0x100 &+ UInt64(thread))
            done.enter()
            Thread.detachNewThread {
                var random = random
                while !stop.isSet {
                    worker.step(using: &random, nextVersion: versions.next)
                }
                done.leave()
            }
        }
        Thread.sleep(forTimeInterval: seconds)
        stop.set()
        done.wait()
        do {
            try cache.close()
        } catch {
            journal.write(.failure(id: 0, at: Journal.now(), error: "close: \(error)"))
            return 1
        }
        return 0
    }
}

/// One thread of the `write` command: picks an operation at random and runs
/// it through the journal.
private struct Worker: Sendable {
    let cache: Kache
    let pool: Kache.Pool
    let smallPool: Kache.Pool
    let queue: Kache.Queue
    let journal: Journal
    let thread: Int
    let threads: Int

    func step(using random: inout SplitMix64, nextVersion: () -> UInt64) {
        let roll = Int(random.next() % 100)
        let ownsShared = thread == 0
        switch roll {
        case 0 ..< 35:
            set(space: "", key: ownedKey(CrashLayout.topLevelKeys, &random), &random, nextVersion())
        case 35 ..< 50:
            set(space: CrashLayout.poolName, key: ownedKey(CrashLayout.poolKeys, &random), &random, nextVersion())
        case 50 ..< 55 where ownsShared:
            set(space: CrashLayout.smallPoolName, key: CrashLayout.smallPoolKeys.randomElement(using: &random)!, &random, nextVersion())
        case 55 ..< 60:
            let key = ownedKey(CrashLayout.topLevelKeys, &random)
            journal.record(.remove(space: "", key: key)) { cache.removeValue(forKey: key); return nil }
        case 60 ..< 62:
            let key = ownedKey(CrashLayout.poolKeys, &random)
            journal.record(.remove(space: CrashLayout.poolName, key: key)) { pool.removeValue(forKey: key); return nil }
        case 62 ..< 72 where ownsShared:
            let item = nextVersion()
            let ttl = CrashLayout.longTTL
            journal.record(.push(queue: queue.name, item: item, ttl: ttl.nanoseconds)) {
                try queue.push(CrashValues.item(queue: queue.name, item: item), ttl: ttl)
                return nil
            }
        case 72 ..< 80 where ownsShared:
            journal.record(.pop(queue: queue.name)) {
                guard let data = queue.pop() else { return nil }
                guard let item = CrashValues.itemNumber(of: data, queue: queue.name) else {
                    corrupt("pop returned \(data.count) bytes that are no item of \(queue.name)")
                }
                return item
            }
        case 80 ..< 82 where ownsShared:
            // Saves come from one thread: concurrent save() calls have their own test
            // (ManifestRaceTests), which fails while they race on the manifest.
            journal.record(.save) { try cache.save(); return nil }
        case 82 ..< 84:
            journal.record(.sweep) { cache.sweep(); return nil }
        default:
            read(&random)
        }
    }

    private func ownedKey(_ keys: [String], _ random: inout SplitMix64) -> String {
        let owned = stride(from: thread, to: keys.count, by: threads).map { keys[$0] }
        return owned.randomElement(using: &random)!
    }

    private func set(space: String, key: String, _ random: inout SplitMix64, _ version: UInt64) {
        // Most values live an hour; some expire within two seconds, across the kills.
        let ttl: Duration = random.next() % 100 < 85 ? CrashLayout.longTTL : .milliseconds(50 + Int64(random.next() % 1950))
        let data = CrashValues.value(space: space, key: key, version: version)
        journal.record(.set(space: space, key: key, version: version, ttl: ttl.nanoseconds)) {
            switch space {
            case "": try cache.set(data, forKey: key, ttl: ttl)
            case pool.name: try pool.set(data, forKey: key, ttl: ttl)
            default: try smallPool.set(data, forKey: key, ttl: ttl)
            }
            return nil
        }
    }

    /// Reads a key and checks that whatever comes back is a value set for it.
    private func read(_ random: inout SplitMix64) {
        let (space, key): (String, String) = random.next() % 2 == 0
            ? ("", CrashLayout.topLevelKeys.randomElement(using: &random)!)
            : (pool.name, CrashLayout.poolKeys.randomElement(using: &random)!)
        let data = space.isEmpty ? cache.data(forKey: key) : pool.data(forKey: key)
        if let data, CrashValues.version(of: data, space: space, key: key) == nil {
            corrupt("read \(data.count) bytes under \(space)/\(key) that are no value set for it")
        }
    }

    private func corrupt(_ message: String) -> Never {
        journal.write(.corruption(message))
        exit(3)
    }
}

extension Duration {
    /// Whole nanoseconds (the TTLs used here are far from overflowing).
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}

/// A counter shared by threads: each `next()` returns a number no other call returns.
private final class SharedCounter: Sendable {
    private let value: Atomic<UInt64>

    init(_ start: UInt64) {
        value = Atomic(start)
    }

    func next() -> UInt64 {
        value.wrappingAdd(1, ordering: .relaxed).newValue
    }
}

/// A flag set once by one thread and polled by others.
private final class SharedFlag: Sendable {
    private let value = Atomic<Bool>(false)

    var isSet: Bool { value.load(ordering: .relaxed) }

    func set() {
        value.store(true, ordering: .relaxed)
    }
}
