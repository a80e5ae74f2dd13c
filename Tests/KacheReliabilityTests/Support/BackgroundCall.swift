import Foundation
@testable import Kache
import KacheStorage

/// A library call run on a thread of its own, so that a test can hold it at
/// a lock and act meanwhile.
final class BackgroundCall: Sendable {
    private let done = DispatchSemaphore(value: 0)
    private let failure = Locked<String?>(nil)

    func start(_ body: @escaping @Sendable () throws -> Void) {
        Thread.detachNewThread { [done, failure] in
            do {
                try body()
            } catch {
                failure.withLock { $0 = "\(error)" }
            }
            done.signal()
        }
    }

    /// Waits for the call to return; throws what it threw.
    func wait() throws {
        done.wait()
        if let failure = failure.withLock({ $0 }) { throw BackgroundCallFailed(description: failure) }
    }
}

struct BackgroundCallFailed: Error, CustomStringConvertible {
    let description: String
}
