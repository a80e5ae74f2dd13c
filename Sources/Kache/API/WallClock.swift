import Foundation
import KacheStorage
import Synchronization

/// The source of wall-clock time for every expiry decision.
///
/// Expiry times are absolute wall-clock instants so that they survive restarts.
/// Inject a ``ManualClock`` to move time in tests and benchmarks without sleeping.
///
/// ```swift
/// let clock = ManualClock()
/// let cache = try Kache(directory: dir, configuration: .init(clock: clock))
/// clock.advance(by: .seconds(3601))
/// ```
public protocol WallClock: Sendable {
    /// The current wall-clock time.
    func now() -> Date

    /// The current time in whole nanoseconds since 1970-01-01T00:00:00Z, the
    /// unit every expiry is kept in. The default converts ``now()``, which is
    /// exact only to a few hundred nanoseconds (a `Date` is a `Double` of
    /// seconds); a clock that counts in integers returns its count, so that
    /// instants it means to be equal stay equal.
    func nanosecondsSince1970() -> Int64
}

extension WallClock {
    /// ``now()``, converted (saturating outside the years 1677–2262).
    public func nanosecondsSince1970() -> Int64 { Timestamp(now()) }
}

/// The system's real-time clock.
public struct SystemClock: WallClock {
    /// Creates the system clock.
    public init() {}
    /// The current time from the operating system.
    public func now() -> Date { Date() }

    /// `CLOCK_REALTIME`, to the nanosecond.
    public func nanosecondsSince1970() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}

/// A clock that moves only when told to: for tests and simulated workloads.
///
/// It counts whole nanoseconds, so a thousand steps of 1 ms land exactly on
/// 1 s: adding `Double` seconds to a `Date` a million times would drift by
/// its rounding, and two expiries meant to tie would not.
public final class ManualClock: WallClock {
    private let current: Locked<Int64>

    /// Creates a clock that reads `start` until it is moved.
    public init(_ start: Date = Date(timeIntervalSince1970: 1_800_000_000)) {
        current = Locked(Timestamp(start))
    }

    /// The clock's current time.
    public func now() -> Date { current.withLock { $0 }.date }

    /// The clock's current time, exactly.
    public func nanosecondsSince1970() -> Int64 { current.withLock { $0 } }

    /// Moves the clock forward (or back, with a negative duration).
    public func advance(by duration: Duration) {
        current.withLock { $0 = $0.adding(nanoseconds: duration.saturatingNanoseconds) }
    }

    /// Sets the clock to `date`.
    public func set(to date: Date) {
        current.withLock { $0 = Timestamp(date) }
    }
}

extension Timestamp {
    /// `self + nanoseconds`, saturating at `Int64.max` instead of overflowing:
    /// every expiry `ttl` after `now` is `now.adding(nanoseconds: ttl.saturatingNanoseconds)`.
    package func adding(nanoseconds: Int64) -> Timestamp {
        let (sum, overflow) = addingReportingOverflow(nanoseconds)
        return overflow ? (nanoseconds > 0 ? .max : .min) : sum
    }

    var date: Date { Date(timeIntervalSince1970: Double(self) / 1e9) }
}

extension Duration {
    /// Whole nanoseconds, saturating at `Int64.max` for durations too long to count.
    /// One 128-bit division: `components` took two, and this runs on every set
    /// (about 190 instructions of W8's 6,000).
    package var saturatingNanoseconds: Int64 {
        Int64(clamping: attoseconds / 1_000_000_000)
    }
}
