import Foundation
import KacheStorage
import Synchronization
@testable import Kache

/// What the race stress test's threads did and saw.
final class RaceLedger: Sendable {
    struct Thread: Sendable {
        /// Queue items this thread pushed, in push order.
        var pushed: [UInt64] = []
        /// Queue items this thread popped, in pop order.
        var popped: [UInt64] = []
        var sets = 0
        /// Reads that returned bytes which are no value set for the key.
        var foreign: [String] = []
        /// Calls that threw.
        var errors: [String] = []
        /// Times a Pool was seen over its capacity.
        var overCapacity = 0
    }

    private let threads: [Locked<Thread>]
    private let versions = Atomic<Int>(0)

    init(threadCount: Int) {
        threads = (0 ..< threadCount).map { _ in Locked(Thread()) }
    }

    func record(_ thread: Int, _ change: (inout Thread) -> Void) {
        threads[thread].withLock { change(&$0) }
    }

    func nextVersion() -> Int {
        versions.wrappingAdd(1, ordering: .relaxed).newValue
    }

    var all: [Thread] { threads.map { $0.withLock { $0 } } }
}

/// The value of `version` for `key`: it names both, and its length varies, so a
/// torn, stale-but-foreign or mixed read shows.
func raceValue(_ key: String, _ version: Int) -> Data {
    namedValue(key, version: version, length: version % 900)
}

/// The version `data` is the exact value of for `key`, or nil.
func raceVersion(of data: Data, key: String) -> Int? {
    let prefix = Data("\(key)#".utf8)
    guard data.starts(with: prefix), let end = data.dropFirst(prefix.count).firstIndex(of: UInt8(ascii: "#")),
          let version = Int(String(decoding: data[prefix.count ..< end], as: UTF8.self)),
          raceValue(key, version) == data else { return nil }
    return version
}

/// One thread of the race stress test: random operations on a few shared
/// keys, a small Pool and one Queue, until the deadline.
struct RaceWorker: Sendable {
    static let keys = (0 ..< 24).map { "k\($0)" }
    static let poolKeys = (0 ..< 32).map { "p\($0)" }
    static let poolCapacity = 16

    let cache: Kache
    let pool: Kache.Pool
    let queue: Kache.Queue
    let clock: ManualClock
    let ledger: RaceLedger
    let thread: Int

    func run(until deadline: Date, seed: UInt64) {
        var random = SeededRandom(seed: seed)
        var pushes: UInt64 = 0
        while Date() < deadline {
            do {
                try step(&random, &pushes)
            } catch {
                ledger.record(thread) { $0.errors.append("\(error)") }
            }
        }
    }

    private func step(_ random: inout SeededRandom, _ pushes: inout UInt64) throws {
        let key = Self.keys[Int(random.next() % UInt64(Self.keys.count))]
        let poolKey = Self.poolKeys[Int(random.next() % UInt64(Self.poolKeys.count))]
        let ttl = Duration.milliseconds(Int64(100 + random.next() % 5_000))
        switch random.next() % 20 {
        case 0 ..< 4:
            try cache.set(raceValue(key, ledger.nextVersion()), forKey: key, ttl: ttl)
            ledger.record(thread) { $0.sets += 1 }
        case 4 ..< 7:
            check(cache.data(forKey: key), key: key)
        case 7:
            cache.removeValue(forKey: key)
        case 8:
            cache.sweep()
        case 9 ..< 11:
            try pool.set(raceValue(poolKey, ledger.nextVersion()), forKey: poolKey, ttl: ttl)
            ledger.record(thread) { $0.sets += 1 }
            if pool.count > Self.poolCapacity { ledger.record(thread) { $0.overCapacity += 1 } }
        case 11 ..< 13:
            check(pool.data(forKey: poolKey), key: poolKey)
        case 13:
            pool.removeValue(forKey: poolKey)
        case 14 ..< 16:
            // Items never expire within the test: a lost one is lost, not swept.
            let item = UInt64(thread) << 32 | pushes
            pushes += 1
            try queue.push(raceValue("item", Int(item)), ttl: .seconds(100 * 365 * 86_400))
            ledger.record(thread) { $0.pushed.append(item) }
        case 16 ..< 18:
            if let data = queue.pop() {
                guard let item = raceVersion(of: data, key: "item") else {
                    ledger.record(thread) { $0.foreign.append("a Queue item of \(data.count) bytes") }
                    return
                }
                ledger.record(thread) { $0.popped.append(UInt64(item)) }
            }
        case 18:
            clock.advance(by: .milliseconds(Int64(random.next() % 200)))
        default:
            if thread == 0 { try cache.save() } else { _ = queue.peek() }
        }
    }

    private func check(_ data: Data?, key: String) {
        guard let data, raceVersion(of: data, key: key) == nil else { return }
        ledger.record(thread) { $0.foreign.append("\(data.count) bytes under \(key)") }
    }
}
