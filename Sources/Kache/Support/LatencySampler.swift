import Foundation
import Synchronization

/// Picks the gets and sets a cache times, 1 in `interval` of each on every
/// thread, and hands their durations to the observer a reporter attached
/// (`Kache.sampleLatencies(every:_:)`).
///
/// What an operation pays, so that W2's hot reads do not move:
/// - sampling off (the default): one relaxed load of a word only
///   `sampleLatencies` writes, which every core keeps in its cache;
/// - sampling on: also a relaxed add to a counter of its thread's stripe,
///   a cache line that other threads rarely write (a shared counter would
///   move between cores on every get);
/// - a sampled operation: two readings of the monotonic clock, a lock, and
///   the observer's call, on the caller's thread.
final class LatencySampler: Sendable {
    /// The interval less one (a power of two less one, so that picking is a
    /// mask), or `off`.
    private let mask = Atomic<UInt64>(LatencySampler.off)
    private static let off = UInt64.max
    private let observer = Mutex<(@Sendable (Kache.TimedOperation, Duration) -> Void)?>(nil)
    private let stripes = Stripes()

    /// Counts `operation` on the caller's stripe; the start of its timing
    /// when it is one to time, else nil.
    ///
    /// The start is a plain count of nanoseconds: `ContinuousClock.Instant`
    /// is not frozen, and moving an optional one around cost every set in W8
    /// about 230 instructions of value witnesses, timed or not.
    @inline(__always)
    func start(_ operation: Kache.TimedOperation) -> UInt64? {
        let mask = mask.load(ordering: .relaxed)
        guard mask != Self.off else { return nil }
        guard stripes.count(operation) & mask == 0 else { return nil }
        return Self.monotonicNanoseconds()
    }

    /// Hands the time since `started` to the observer.
    func finish(_ operation: Kache.TimedOperation, since started: UInt64) {
        let duration = Duration.nanoseconds(Int64(clamping: Self.monotonicNanoseconds() &- started))
        observer.withLock { $0 }?(operation, duration)
    }

    /// The monotonic clock (`CLOCK_MONOTONIC`), in nanoseconds.
    private static func monotonicNanoseconds() -> UInt64 {
        var time = timespec()
        clock_gettime(CLOCK_MONOTONIC, &time)
        return UInt64(time.tv_sec) &* 1_000_000_000 &+ UInt64(time.tv_nsec)
    }

    /// Times 1 in `interval` of each operation from now on, for `observer`,
    /// which replaces any observer before it.
    /// - Returns: the interval used: `interval` rounded up to a power of two.
    @discardableResult
    func begin(every interval: Int, _ observer: @escaping @Sendable (Kache.TimedOperation, Duration) -> Void) -> Int {
        let interval = Self.powerOfTwo(atLeast: interval)
        self.observer.withLock { $0 = observer }
        mask.store(UInt64(interval - 1), ordering: .relaxed)
        return interval
    }

    /// The smallest power of two at least `value` (1 for anything under 2), up to 2^62.
    static func powerOfTwo(atLeast value: Int) -> Int {
        guard value > 1 else { return 1 }
        return 1 << min(62, Int.bitWidth - (value - 1).leadingZeroBitCount)
    }

    /// Stops timing; operations pay the load alone again.
    func end() {
        mask.store(Self.off, ordering: .relaxed)
        observer.withLock { $0 = nil }
    }
}

extension LatencySampler {
    /// 64 pairs of counters, a thread's chosen by its id: two threads share
    /// one with a chance of 1 in 64, and then only pay the line moving
    /// between them; counts stay right either way.
    final class Stripes: Sendable {
        private static let bits = 6
        private let stripes = (0 ..< 1 << bits).map { _ in Stripe() }

        /// Adds one to the caller's counter of `operation`; returns its value before.
        @inline(__always)
        func count(_ operation: Kache.TimedOperation) -> UInt64 {
            // Borrowed, not retained: a retain is one more atomic write per operation.
            Unmanaged.passUnretained(stripes[Self.stripeIndex()])._withUnsafeGuaranteedRef { stripe in
                switch operation {
                case .get: stripe.gets.wrappingAdd(1, ordering: .relaxed).oldValue
                case .set: stripe.sets.wrappingAdd(1, ordering: .relaxed).oldValue
                }
            }
        }

        /// The calling thread's stripe: its id, hashed (ids are addresses, far apart and aligned).
        @inline(__always)
        private static func stripeIndex() -> Int {
            #if canImport(Darwin)
            let id = UInt64(UInt(bitPattern: pthread_self()))
            #else
            let id = UInt64(pthread_self())
            #endif
            return Int(truncatingIfNeeded: (id &* 0x9E37_79B9_7F4A_7C15) >> UInt64(64 - bits))
        }
    }

    /// One thread's counters, padded past 128 bytes so that no two stripes'
    /// counters share a cache line (or the pair of lines a core prefetches).
    final class Stripe: Sendable {
        let gets = Atomic<UInt64>(0)
        let sets = Atomic<UInt64>(0)
        private let padding: (UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64, UInt64)
            = (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0)
    }
}
