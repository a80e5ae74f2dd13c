import DequeModule
import Dispatch
import Foundation
import KacheStorage

/// A few threads of Kache's own that run the file work of the `async` API, so
/// that a task awaiting a disk read or an `fsync` never holds one of Swift
/// concurrency's cooperative threads (there are as many as cores: two blocked
/// tasks stop every task on this machine).
///
/// Why not swift-nio's `NIOThreadPool`: it would make every user of the core
/// library build swift-nio for four dozen lines of queue. Why not Dispatch's
/// global queues: they start a thread for each blocked work item, without a
/// bound; a fixed pool caps how many reads wait on the disk at once, and the
/// rest queue here, in order.
///
/// One pool per process, started on first use; its threads live as long as
/// the process, like Dispatch's.
final class IOThreadPool: Sendable {
    /// Four threads: enough to keep a disk's queue fed and to let a slow
    /// `save()` and reads proceed together, few enough to cost nothing idle.
    static let shared = IOThreadPool(threadCount: 4)

    /// Tests only: called in the reading task once `read(whenCancelled:_:)`
    /// has queued its work, so that a test can cancel a read it knows waits
    /// on the pool. (The queue's length can't tell: other tests share the pool.)
    @TaskLocal static var readQueued: (@Sendable () -> Void)?

    private let jobs = Locked(Deque<@Sendable () -> Void>())
    /// Counts queued jobs: a thread waits on it for the next one.
    private let available = DispatchSemaphore(value: 0)

    init(threadCount: Int) {
        for number in 0..<threadCount {
            let thread = Thread { [self] in
                while true {
                    available.wait()
                    jobs.withLock { $0.popFirst() }?()
                }
            }
            thread.name = "kache.io-\(number)"
            thread.start()
        }
    }

    private func submit(_ job: @escaping @Sendable () -> Void) {
        jobs.withLock { $0.append(job) }
        available.signal()
    }

    /// Runs `body` on the pool and returns its result. The calling task waits
    /// for it even when cancelled: `body` changes the cache, and a change is
    /// seen through to its end (its caller learns whether it happened).
    func run<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, E>, Never>) in
            submit { continuation.resume(returning: Result { () throws(E) -> T in try body() }) }
        }
        return try result.get()
    }

    /// Runs `body` on the pool, or returns `whenCancelled` as soon as the
    /// calling task is cancelled. Only for work without effects a caller must
    /// learn about (a read): `body` still runs to its end, and its result is dropped.
    func read<T: Sendable>(whenCancelled: T, _ body: @escaping @Sendable () -> T) async -> T {
        let outcome = OneShot<T>()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                guard outcome.wait(with: continuation) else { return continuation.resume(returning: whenCancelled) }
                submit { outcome.deliver(body()) }
                IOThreadPool.readQueued?()
            }
        } onCancel: {
            outcome.deliver(whenCancelled)
        }
    }
}

/// A continuation resumed exactly once, by whichever comes first: the
/// result or the cancellation.
private final class OneShot<T: Sendable>: Sendable {
    private enum State: Sendable {
        case idle
        case waiting(CheckedContinuation<T, Never>)
        /// Cancelled before the continuation was there.
        case cancelled
        case done
    }

    private let state = Locked(State.idle)

    /// Registers the continuation; false when the task was cancelled first.
    func wait(with continuation: CheckedContinuation<T, Never>) -> Bool {
        state.withLock { state in
            guard case .idle = state else { return false }
            state = .waiting(continuation)
            return true
        }
    }

    func deliver(_ value: T) {
        let waiting = state.withLock { state -> CheckedContinuation<T, Never>? in
            switch state {
            case let .waiting(continuation):
                state = .done
                return continuation
            case .idle:
                state = .cancelled
                return nil
            case .cancelled, .done:
                return nil
            }
        }
        waiting?.resume(returning: value)
    }
}
