import Foundation

/// Runs `body` on a thread of its own and returns what it returns, without
/// holding one of Swift concurrency's cooperative threads meanwhile (there
/// are as many as cores). A test that blocks for minutes, as the crash
/// campaign does while it waits on its child processes, would otherwise take
/// half of this machine's two from every other test running beside it: once
/// under load, a test whose tasks waited on the other one ran out of time.
public func onOwnThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread.detachNewThread {
            continuation.resume(with: Result { try body() })
        }
    }
}
