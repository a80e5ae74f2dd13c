#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Nanoseconds of the monotonic clock: one `clock_gettime` (a vDSO call, about
/// 20 ns), cheap enough to read around every operation of a latency pass.
enum MonotonicClock {
    /// Nanoseconds since an arbitrary start, never going back.
    @inline(__always)
    static func now() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Seconds between two readings.
    static func seconds(from start: UInt64, to end: UInt64) -> Double {
        Double(end &- start) / 1e9
    }

    /// Runs `body` and returns its result and the seconds it took.
    static func measure<T>(_ body: () throws -> T) rethrows -> (value: T, seconds: Double) {
        let start = now()
        let value = try body()
        return (value, seconds(from: start, to: now()))
    }
}
