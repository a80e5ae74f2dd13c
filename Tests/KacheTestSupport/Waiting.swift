import Foundation

/// Waits for a state a test needs before it goes on, by polling the condition
/// that shows it. A state that never comes fails the test (the error names
/// it) rather than letting it pass without having reached it, as a sleep would.
///
/// ```swift
/// try await waitUntil("the loop waits for a push") { cache.queueWaiters.waiting(space: queue.space) == 1 }
/// ```
///
/// Polled every 10 ms without holding a thread.
public func waitUntil(_ state: String, timeout: Duration = .seconds(60), _ condition: () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw StateNeverCame(state: state, timeout: timeout) }
        try await Task.sleep(for: .milliseconds(10))
    }
}

/// `waitUntil` for synchronous code: blocks the calling thread, polling
/// every millisecond. Never from `async` code, where it would hold a
/// cooperative thread that the state waited for may need.
@available(*, noasync, message: "use waitUntil: this one blocks a cooperative thread")
public func blockUntil(_ state: String, timeout: Duration = .seconds(60), _ condition: () throws -> Bool) throws {
    let deadline = ContinuousClock.now + timeout
    while try !condition() {
        guard ContinuousClock.now < deadline else { throw StateNeverCame(state: state, timeout: timeout) }
        usleep(1_000)
    }
}

/// What `waitUntil` and `blockUntil` throw when the state did not come in time.
public struct StateNeverCame: Error, CustomStringConvertible {
    public let state: String
    public let timeout: Duration

    public var description: String { "waited \(timeout) for \(state); it never came" }
}
