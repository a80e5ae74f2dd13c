import Dispatch
import Foundation
import KacheStorage
import KacheTestSupport
import Synchronization
import Testing
@testable import Kache

// Serialized: a test here holds every thread of the process's one I/O pool
// (`BusyPool`), and another needs that pool free (each consumer's first pop).
// Run side by side while long synchronous tests of other suites held both
// cooperative threads, the holder was starved before it let go, and the
// consumers' pops waited behind it past their 120 s.
@Suite(.serialized) struct AsyncAPITests {
    /// More tasks than the cooperative pool has threads: a form that blocked a
    /// thread while it waited would stall the others.
    static let taskCount = 4 * ProcessInfo.processInfo.activeProcessorCount + 8

    @Test(arguments: [Durability.memory, .async, .sync, .fsync])
    func valuesRoundTripThroughTheAsyncForms(durability: Durability) async throws {
        let dir = TemporaryDirectory()
        // Budget 0: in the disk modes every read comes from a file, on the I/O pool.
        let budget = durability == .memory ? 1 << 20 : 0
        let cache = try Kache(directory: dir.url, configuration: .testing(durability, memoryBudget: budget))
        for i in 0 ..< 50 { try await cache.set(compressible(500, seed: i), forKey: "k\(i)", ttl: .seconds(60)) }
        try await cache.save()
        for i in 0 ..< 50 { #expect(await cache.data(forKey: "k\(i)") == compressible(500, seed: i)) }
        await cache.removeValue(forKey: "k0")
        #expect(await cache.data(forKey: "k0") == nil)
        #expect(await cache.data(forKey: "absent") == nil)

        let pool = try cache.pool(named: "p", capacity: 2)
        try await pool.set(Data("a".utf8), forKey: "a", ttl: .seconds(10))
        try await pool.set(Data("b".utf8), forKey: "b", ttl: .seconds(20))
        try await pool.set(Data("c".utf8), forKey: "c", ttl: .seconds(30))
        #expect(await pool.data(forKey: "a") == nil, "the earliest-expiring key is evicted, as in the sync form")
        #expect(await pool.data(forKey: "c") == Data("c".utf8))
        await pool.removeValue(forKey: "c")
        #expect(pool.count == 1)

        struct Profile: Codable, Equatable { var name: String }
        try await cache.set(Profile(name: "Ada"), forKey: "profile", ttl: .seconds(60))
        #expect(try await cache.value(forKey: "profile", as: Profile.self) == Profile(name: "Ada"))

        try await cache.close()
        #expect(await cache.data(forKey: "k1") == nil)
        await #expect(throws: KacheError.closed) { try await cache.set(Data("x".utf8), forKey: "x", ttl: .seconds(1)) }
        if durability != .memory {
            let reopened = try Kache(directory: dir.url, configuration: .testing(durability))
            #expect(await reopened.data(forKey: "k49") == compressible(500, seed: 49))
            #expect(try await reopened.value(forKey: "profile", as: Profile.self) == Profile(name: "Ada"))
        }
    }

    @Test func errorsComeThroughTyped() async throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync))
        await #expect(throws: KacheError.emptyKey) { try await cache.set(Data("x".utf8), forKey: "", ttl: .seconds(1)) }
        await #expect(throws: KacheError.invalidTTL(.zero)) { try await cache.set(Data("x".utf8), forKey: "k", ttl: .zero) }
        #expect(cache.statistics.entries == 0)
    }

    @Test(arguments: [Durability.async, .sync])
    func manyTasksAtOnceFinish(durability: Durability) async throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(durability, memoryBudget: 4_000))
        let perTask = 40
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0 ..< Self.taskCount {
                group.addTask {
                    for i in 0 ..< perTask {
                        let key = "t\(task)-\(i)"
                        try await cache.set(compressible(300, seed: task * perTask + i), forKey: key, ttl: .seconds(600))
                        // Mostly from files: the 4,000-byte budget holds about a dozen values.
                        let read = await cache.data(forKey: "t\(task)-\(i / 2)")
                        #expect(read == compressible(300, seed: task * perTask + i / 2))
                    }
                }
            }
            try await group.waitForAll()
        }
        try await cache.save()
        #expect(cache.statistics.entries == Self.taskCount * perTask)
        cache.checkInvariants()
    }

    // MARK: - Cancellation

    /// Occupies every thread of the I/O pool until `release` is called.
    private final class BusyPool: Sendable {
        private let gate = DispatchSemaphore(value: 0)
        private let released = Atomic(false)
        private let threads = 4

        /// Returns once every thread of the pool is held. It awaits each one
        /// rather than blocking on a semaphore: a cooperative thread blocked
        /// until other tasks run can, with the other one blocked too, stop
        /// the whole test run (seen with a test waiting on a child process).
        static func occupying() async -> BusyPool {
            let busy = BusyPool()
            for _ in 0 ..< busy.threads {
                await withCheckedContinuation { (started: CheckedContinuation<Void, Never>) in
                    Task { [gate = busy.gate] in
                        try? await IOThreadPool.shared.run { () throws -> Void in
                            started.resume()
                            gate.wait()
                        }
                    }
                }
            }
            return busy
        }

        /// Whether `release` has been called: after it, a read may have returned by doing its work.
        var isReleased: Bool { released.load(ordering: .acquiring) }

        func release() {
            guard !released.exchange(true, ordering: .acquiringAndReleasing) else { return }
            for _ in 0 ..< threads { gate.signal() }
        }
    }

    /// A read that memory answers runs on the caller's executor: from an
    /// actor, no hop to the global executor and back (the actor's executor
    /// would be given a job to resume it).
    @Test func aReadFromMemoryOnAnActorIsAnsweredWithoutLeavingTheActor() async throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.async))
        try await cache.set(Data("in memory".utf8), forKey: "k", ttl: .seconds(60))
        let pool = try cache.pool(named: "p", capacity: 10)
        try await pool.set(Data("in the pool".utf8), forKey: "k", ttl: .seconds(60))
        let (reads, jobs) = await CountingActor().count { _ in
            [await cache.data(forKey: "k"), await pool.data(forKey: "k"), await cache.data(forKey: "absent")]
        }
        #expect(reads == [Data("in memory".utf8), Data("in the pool".utf8), nil])
        #expect(jobs == 0)
    }

    /// A change that stays in memory runs on the caller's executor: from an
    /// actor, a set, a removal, a push and a sweep give its executor no job.
    @Test func changesInMemoryOnAnActorAreMadeWithoutLeavingTheActor() async throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.async))
        let pool = try cache.pool(named: "p", capacity: 10)
        let queue = try cache.queue(named: "q", capacity: 10)
        let (outcome, jobs) = await CountingActor().count { _ in
            do {
                try await cache.set(Data("v".utf8), forKey: "k", ttl: .seconds(60))
                try await pool.set(Data("p".utf8), forKey: "k", ttl: .seconds(60))
                try await queue.push(Data("item".utf8), ttl: .seconds(60))
                await cache.removeValue(forKey: "k")
                await pool.removeValue(forKey: "absent")
                return "swept \(await cache.sweep())"
            } catch {
                return "\(error)"
            }
        }
        #expect(outcome == "swept 0")
        #expect(jobs == 0)
        #expect(await cache.data(forKey: "k") == nil)
        #expect(await pool.data(forKey: "k") == Data("p".utf8))
    }

    /// A change that must wait for the disk (`sync`) runs on the I/O pool,
    /// off the caller's actor, and resumes it once.
    @Test func aSetThatWritesAFileOnAnActorReturnsToTheActorOnce() async throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync))
        let (outcome, jobs) = await CountingActor().count { _ in
            do {
                try await cache.set(Data("on disk".utf8), forKey: "k", ttl: .seconds(60))
                return "set"
            } catch {
                return "\(error)"
            }
        }
        #expect(outcome == "set")
        #expect(jobs == 1)
        try await cache.close()
        let reopened = try Kache(directory: dir.url, configuration: .testing(.sync))
        #expect(await reopened.data(forKey: "k") == Data("on disk".utf8))
    }

    /// A read of a value on disk waits for the I/O pool off the caller's
    /// actor, and resumes it once.
    @Test func aReadFromAFileOnAnActorReturnsToTheActorOnce() async throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, memoryBudget: 0))
        try await cache.set(Data("on disk".utf8), forKey: "k", ttl: .seconds(60))
        let diskHits = cache.statistics.diskHits
        let (read, jobs) = await CountingActor().count { _ in await cache.data(forKey: "k") }
        #expect(read == Data("on disk".utf8))
        #expect(cache.statistics.diskHits == diskHits + 1)
        #expect(jobs == 1)
    }

    @Test func aCancelledReadReturnsAtOnceAndChangesNothing() async throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, memoryBudget: 0))
        try await cache.set(Data("on disk".utf8), forKey: "k", ttl: .seconds(60))
        let busy = await BusyPool.occupying()
        // Should the read not return by its cancellation, the pool is freed after
        // 60 s, so that the test ends, and the check on the pool fails. A check on
        // the pool and not on a wall clock: with the whole suite on 2 cores, a
        // prompt return was once observed seconds late.
        // On a Dispatch thread, not a task: starved cooperative threads must not keep the pool held.
        DispatchQueue.global().asyncAfter(deadline: .now() + 60) { busy.release() }
        let diskHits = cache.statistics.diskHits
        let queued = Locked(false)
        let read = IOThreadPool.$readQueued.withValue({ queued.withLock { $0 = true } }) {
            Task { await cache.data(forKey: "k") }
        }
        try await waitUntil("the read waits on the busy I/O pool") { queued.withLock { $0 } }
        read.cancel()
        let value = await read.value
        #expect(!busy.isReleased, "the read returned only once the I/O pool was free, not by its cancellation")
        #expect(value == nil)
        busy.release()
        // The file read it had queued still runs, once the pool is free, and only counts its hit.
        try await waitUntil("the cancelled read's file work runs") { cache.statistics.diskHits == diskHits + 1 }
        #expect(await cache.data(forKey: "k") == Data("on disk".utf8))
        #expect(cache.statistics.entries == 1)
        cache.checkInvariants()
    }

    @Test func aReadInATaskCancelledBeforeItReadsNoFile() async throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, memoryBudget: 0))
        try await cache.set(Data("v".utf8), forKey: "k", ttl: .seconds(60))
        let diskHits = cache.statistics.diskHits
        let read = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await cache.data(forKey: "k")
        }
        #expect(await read.value == nil)
        #expect(cache.statistics.diskHits == diskHits)
    }

    @Test func changesInACancelledTaskRunToTheirEnd() async throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, memoryBudget: 0))
        let queue = try cache.queue(named: "q", capacity: 10)
        try await queue.push(Data("item".utf8), ttl: .seconds(60))
        let task = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await cache.set(Data("kept".utf8), forKey: "k", ttl: .seconds(60))
            return await queue.pop()
        }
        #expect(try await task.value == Data("item".utf8), "an item taken is returned, never dropped")
        #expect(queue.count == 0)
        await #expect(cache.data(forKey: "k") == Data("kept".utf8))
        cache.checkInvariants()
    }

    // MARK: - A Queue as an AsyncSequence

    @Test func itemsWaitForPushesAndEndOnClose() async throws {
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.async, memoryBudget: 2_000))
        let queue = try cache.queue(named: "jobs", capacity: 10_000)
        let itemCount = 300
        // More consumers than cooperative threads, all waiting before the first push.
        let consumers = Self.taskCount
        let received = Locked<[Data]>([])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0 ..< consumers {
                // Ahead of the tests still waiting to start: the whole suite shares two
                // cooperative threads, and under load consumers queued behind those tests
                // once took longer than the wait below allows.
                group.addTask(priority: .high) {
                    for try await item in queue.items {
                        received.withLock { $0.append(item) }
                    }
                }
            }
            // Each consumer's first pop runs on the I/O pool, which the whole suite shares: allow for a crowd.
            try await waitUntil("every consumer waits for a push", timeout: .seconds(120)) {
                cache.queueWaiters.waiting(space: queue.space) == consumers
            }
            for i in 0 ..< itemCount { try await queue.push(compressible(200, seed: i), ttl: .seconds(60)) }
            try await waitUntil("every item reaches a consumer", timeout: .seconds(120)) { received.withLock { $0.count } >= itemCount }
            try await cache.close()
            try await group.waitForAll()
        }
        let items = received.withLock { $0 }
        #expect(items.count == itemCount, "each item once, to one consumer")
        #expect(Set(items) == Set((0 ..< itemCount).map { compressible(200, seed: $0) }))
    }

    @Test func itemsComeInOrderAndSkipExpiredOnes() async throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: .testing(.sync, clock: clock, memoryBudget: 0))
        let queue = try cache.queue(named: "q", capacity: 10)
        try await queue.push(Data("first".utf8), ttl: .seconds(100))
        try await queue.push(Data("expires".utf8), ttl: .seconds(1))
        try await queue.push(Data("third".utf8), ttl: .seconds(100))
        clock.advance(by: .seconds(5))
        var seen: [String] = []
        for try await item in queue.items {
            seen.append(String(decoding: item, as: UTF8.self))
            if seen.count == 2 { break }
        }
        #expect(seen == ["first", "third"])
        #expect(queue.count == 0)
    }

    @Test func aLoopWaitingForItemsEndsWhenItsTaskIsCancelled() async throws {
        let cache = try Kache(inMemory: .testing())
        let queue = try cache.queue(named: "q", capacity: 10)
        let loop = Task {
            for try await _ in queue.items {}
        }
        try await waitUntil("the loop waits for a push") { cache.queueWaiters.waiting(space: queue.space) == 1 }
        loop.cancel()
        await #expect(throws: CancellationError.self) { try await loop.value }
        // The cancelled waiter is gone: a push afterwards stays in the Queue.
        try await queue.push(Data("later".utf8), ttl: .seconds(60))
        #expect(await queue.pop() == Data("later".utf8))
    }
}
