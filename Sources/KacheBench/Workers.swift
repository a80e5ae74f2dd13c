import Dispatch
import Foundation
import Synchronization

/// Runs the same body on several threads that start together, and times them
/// from the moment they are released to the moment the last one finishes.
enum Workers {
    /// Runs `body(threadIndex)` on `count` threads (on the calling thread when
    /// `count` is 1, so a one-thread figure pays no hand-over).
    /// - Returns: each thread's result, in thread order, and the elapsed seconds.
    /// - Throws: the first error a thread threw (after every thread has finished).
    static func run<Result: Sendable>(
        count: Int, _ body: @escaping @Sendable (Int) throws -> Result
    ) throws -> (results: [Result], seconds: Double) {
        precondition(count >= 1, "at least one thread")
        if count == 1 {
            let (value, seconds) = try MonotonicClock.measure { try body(0) }
            return ([value], seconds)
        }
        let outcomes = Mutex<[Swift.Result<Result, any Error>?]>(Array(repeating: nil, count: count))
        let ready = DispatchSemaphore(value: 0)
        let go = DispatchSemaphore(value: 0)
        let done = DispatchGroup()
        for index in 0..<count {
            done.enter()
            let thread = Thread {
                ready.signal()
                go.wait()
                let outcome = Swift.Result { try body(index) }
                outcomes.withLock { $0[index] = outcome }
                done.leave()
            }
            thread.name = "kache-bench.worker-\(index)"
            thread.stackSize = 8 << 20
            thread.start()
        }
        for _ in 0..<count { ready.wait() }
        let start = MonotonicClock.now()
        for _ in 0..<count { go.signal() }
        done.wait()
        let seconds = MonotonicClock.seconds(from: start, to: MonotonicClock.now())
        let results = try outcomes.withLock { outcomes in try outcomes.map { try $0!.get() } }
        return (results, seconds)
    }
}
