import KacheStorage
import Foundation
import Kache

/// A clock that counts its readings and moves 1 µs forward after each one,
/// so that two readings are never the same instant: a test can tell how
/// many readings a call made, and which of them an expiry came from.
///
/// ```swift
/// let clock = CountingClock()
/// try await cache.set(value, forKey: "k", ttl: .seconds(60))
/// #expect(clock.readings == 1)
/// ```
final class CountingClock: WallClock {
    private struct State {
        var now: Int64
        var readings = 0
    }

    private let state: Locked<State>
    private let step: Int64 = 1_000

    /// Creates a clock that reads `start` (ns since 1970) first.
    init(start: Int64 = 1_800_000_000 * 1_000_000_000) {
        state = Locked(State(now: start))
    }

    /// How many times the clock was read.
    var readings: Int { state.withLock { $0.readings } }

    /// The time the next reading returns, without reading it.
    var next: Int64 { state.withLock { $0.now } }

    /// Makes the next reading return `nanoseconds`.
    func set(to nanoseconds: Int64) {
        state.withLock { $0.now = nanoseconds }
    }

    func nanosecondsSince1970() -> Int64 {
        state.withLock { state in
            defer {
                state.now += step
                state.readings += 1
            }
            return state.now
        }
    }

    func now() -> Date { Date(timeIntervalSince1970: Double(nanosecondsSince1970()) / 1e9) }
}
