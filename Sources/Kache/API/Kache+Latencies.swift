extension Kache {
    /// An operation whose duration ``sampleLatencies(every:_:)`` reports.
    public enum TimedOperation: String, Sendable, Hashable, CaseIterable {
        /// A read: `data(forKey:)` and the like, of the top level and of a
        /// Pool, from memory or from disk, a hit or a miss, sync or async.
        case get
        /// A write: `set(_:forKey:ttl:)` and the like, of the top level, a
        /// Pool or a Queue, sync or async, until it returns to the caller.
        case set
    }

    /// Times 1 in `interval` gets and 1 in `interval` sets on each thread,
    /// and calls `observer` with each duration, on the thread of the
    /// operation, after it.
    ///
    /// A metrics reporter calls this (KacheMetrics' `KacheMetricsReporter`
    /// records the durations into swift-metrics timers). Until it is called,
    /// and after ``stopSamplingLatencies()``, an operation pays one load of a
    /// word no one writes; while it runs, an operation not timed also adds
    /// one to a counter of its thread's own. A second call replaces the
    /// interval and the observer.
    ///
    /// ```swift
    /// cache.sampleLatencies(every: 1024) { operation, duration in
    ///     print(operation, duration)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - interval: rounded up to a power of two (picking one in it is then
    ///     a mask); 1 times every operation.
    ///   - observer: called for 1 in `interval` operations; keep it short, the
    ///     caller waits for it.
    /// - Returns: the interval used.
    @discardableResult
    public func sampleLatencies(every interval: Int, _ observer: @escaping @Sendable (TimedOperation, Duration) -> Void) -> Int {
        latencies.begin(every: interval, observer)
    }

    /// Stops the timing ``sampleLatencies(every:_:)`` started.
    public func stopSamplingLatencies() {
        latencies.end()
    }
}
