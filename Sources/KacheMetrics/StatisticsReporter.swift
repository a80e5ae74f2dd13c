import CoreMetrics
import Synchronization

/// Reports a statistics snapshot through swift-metrics: each counter by what
/// its figure gained since the last report, each gauge by its figure now.
///
/// The reporters of Kache, KacheHTTP and KacheRedis are each a list of
/// readings of their own statistics over one of these; `package`, so that
/// their modules share it and users never see it.
package final class StatisticsReporter<Snapshot>: Sendable {
    /// A figure of the snapshot, and the name and dimensions it is reported under.
    package struct Reading<Value>: Sendable {
        let name: String
        let dimensions: [(String, String)]
        let read: @Sendable (Snapshot) -> Value

        package init(_ name: String, _ dimensions: [(String, String)] = [], _ read: @escaping @Sendable (Snapshot) -> Value) {
            self.name = name
            self.dimensions = dimensions
            self.read = read
        }
    }

    private let snapshot: @Sendable () -> Snapshot
    private let counters: [(metric: Counter, read: @Sendable (Snapshot) -> UInt64)]
    private let gauges: [(metric: Gauge, read: @Sendable (Snapshot) -> Int)]
    /// The counters' figures at the last report.
    private let lastCounts: Mutex<[UInt64]>

    /// Metrics named `prefix_name`, each with `dimensions` and its own added,
    /// made by `factory`; `snapshot` reads the statistics at each report.
    package init(
        prefix: String, dimensions: [(String, String)], factory: any MetricsFactory,
        snapshot: @escaping @Sendable () -> Snapshot, counters: [Reading<UInt64>], gauges: [Reading<Int>]
    ) {
        self.snapshot = snapshot
        self.counters = counters.map { reading in
            (Counter(label: "\(prefix)_\(reading.name)", dimensions: dimensions + reading.dimensions, factory: factory), reading.read)
        }
        self.gauges = gauges.map { reading in
            (Gauge(label: "\(prefix)_\(reading.name)", dimensions: dimensions + reading.dimensions, factory: factory), reading.read)
        }
        lastCounts = Mutex(Array(repeating: 0, count: counters.count))
    }

    /// Reads the statistics once and reports them.
    package func report() {
        lastCounts.withLock { last in
            // Under the lock, so that two reports never count one gain twice.
            let statistics = snapshot()
            for (index, counter) in counters.enumerated() {
                let now = counter.read(statistics)
                // A figure only grows while its source lives; one that went back is not counted again.
                if now > last[index] { counter.metric.increment(by: now - last[index]) }
                last[index] = now
            }
            for gauge in gauges { gauge.metric.record(gauge.read(statistics)) }
        }
    }

    /// Reports every `interval` until the task is cancelled, and once more then.
    package func run(every interval: Duration) async {
        defer { report() }
        while !Task.isCancelled {
            report()
            do { try await Task.sleep(for: interval) } catch { return }
        }
    }
}
