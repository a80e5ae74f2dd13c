import Dispatch
import Foundation
import Kache
import Synchronization

/// W2's reads and W3's mixed operations through Kache's `async` API: each
/// list run by a task of its own on Swift's cooperative pool, as a server's
/// request handlers would call it. The same lists as the sync loops, so the
/// two figures sit side by side.
enum AsyncLoops {
    /// Gets every key of each task's list with `await cache.data(forKey:)`; returns the hits.
    static func reads(_ cache: Kache, keys: [[String]], progress: ProgressLine) throws -> (hits: Int, seconds: Double) {
        let (hits, seconds) = try run(tasks: keys.count) { task in
            var hits = 0
            for (index, key) in keys[task].enumerated() {
                if await cache.data(forKey: key) != nil { hits += 1 }
                if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { progress.advance(by: ProgressLine.stride) }
            }
            return hits
        }
        return (hits.reduce(0, +), seconds)
    }

    /// Runs each task's mixed operations with the async get and set; returns the hits of its gets.
    static func mixed(_ cache: Kache, operations: [[MixedOperation]], ttl: Duration, progress: ProgressLine) throws -> (hits: Int, seconds: Double) {
        let (hits, seconds) = try run(tasks: operations.count) { task in
            var hits = 0
            for (index, operation) in operations[task].enumerated() {
                switch operation {
                case let .get(key):
                    if await cache.data(forKey: key) != nil { hits += 1 }
                case let .set(key, value):
                    try await cache.set(value, forKey: key, ttl: ttl)
                }
                if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { progress.advance(by: ProgressLine.stride) }
            }
            return hits
        }
        return (hits.reduce(0, +), seconds)
    }

    /// Runs `body(taskIndex)` in `count` child tasks of one task group and
    /// blocks the calling thread (the bench's own, never a cooperative one)
    /// until all have finished.
    /// - Returns: each task's result, in task order, and the seconds from the
    ///   first task's start to the last one's end.
    /// - Throws: the first error a task threw.
    private static func run<Result: Sendable>(
        tasks count: Int, _ body: @escaping @Sendable (Int) async throws -> Result
    ) throws -> (results: [Result], seconds: Double) {
        let outcome = Mutex<Swift.Result<(results: [Result], seconds: Double), any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let result: Swift.Result<(results: [Result], seconds: Double), any Error>
            do {
                result = .success(try await withThrowingTaskGroup(of: (Int, Result).self) { group in
                    let start = MonotonicClock.now()
                    for index in 0..<count {
                        group.addTask { (index, try await body(index)) }
                    }
                    var results = [Result?](repeating: nil, count: count)
                    for try await (index, value) in group { results[index] = value }
                    return (results.map { $0! }, MonotonicClock.seconds(from: start, to: MonotonicClock.now()))
                })
            } catch {
                result = .failure(error)
            }
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        return try outcome.withLock { $0! }.get()
    }
}
