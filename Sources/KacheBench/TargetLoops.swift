import Foundation

/// The timed loops of W2 and W3, generic over what they drive, so that Kache
/// and its floor run the same code. Each comes twice: a throughput pass with
/// nothing around the operations, and a latency pass that reads the clock
/// after every operation (about 20 ns, which is why the throughput figures
/// come from the other pass).
enum TargetLoops {
    /// Gets every key of each thread's list; returns the hits.
    static func reads<T: KeyValueTarget>(_ target: T, keys: [[String]], progress: ProgressLine) throws -> (hits: Int, seconds: Double) {
        let (hits, seconds) = try Workers.run(count: keys.count) { thread in
            var hits = 0
            for (index, key) in keys[thread].enumerated() {
                if target.value(forKey: key) != nil { hits += 1 }
                if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { progress.advance(by: ProgressLine.stride) }
            }
            return hits
        }
        return (hits.reduce(0, +), seconds)
    }

    /// The latency of every get of each thread's list.
    static func readLatencies<T: KeyValueTarget>(_ target: T, keys: [[String]], progress: ProgressLine) throws -> LatencyRecorder {
        try latencies(of: keys, progress: progress) { key in _ = target.value(forKey: key) }
    }

    /// Runs each thread's mixed operations; returns the hits of its gets.
    static func mixed<T: KeyValueTarget>(_ target: T, operations: [[MixedOperation]], ttl: Duration, progress: ProgressLine) throws -> (hits: Int, seconds: Double) {
        let (hits, seconds) = try Workers.run(count: operations.count) { thread in
            var hits = 0
            for (index, operation) in operations[thread].enumerated() {
                switch operation {
                case let .get(key):
                    if target.value(forKey: key) != nil { hits += 1 }
                case let .set(key, value):
                    try target.store(value, forKey: key, ttl: ttl)
                }
                if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { progress.advance(by: ProgressLine.stride) }
            }
            return hits
        }
        return (hits.reduce(0, +), seconds)
    }

    /// The latency of every operation of each thread's mixed list.
    static func mixedLatencies<T: KeyValueTarget>(_ target: T, operations: [[MixedOperation]], ttl: Duration, progress: ProgressLine) throws -> LatencyRecorder {
        try latencies(of: operations, progress: progress) { operation in
            switch operation {
            case let .get(key):
                _ = target.value(forKey: key)
            case let .set(key, value):
                try target.store(value, forKey: key, ttl: ttl)
            }
        }
    }

    /// Runs `perform` on each thread's items, recording the time of each call;
    /// the time spent redrawing the progress line is left out.
    private static func latencies<Item: Sendable>(
        of items: [[Item]], progress: ProgressLine, _ perform: @escaping @Sendable (Item) throws -> Void
    ) throws -> LatencyRecorder {
        let (recorders, _) = try Workers.run(count: items.count) { thread in
            var recorder = LatencyRecorder()
            var last = MonotonicClock.now()
            for (index, item) in items[thread].enumerated() {
                try perform(item)
                let now = MonotonicClock.now()
                recorder.record(now &- last)
                last = now
                if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 {
                    progress.advance(by: ProgressLine.stride)
                    last = MonotonicClock.now()
                }
            }
            return recorder
        }
        return merged(recorders)
    }

    private static func merged(_ recorders: [LatencyRecorder]) -> LatencyRecorder {
        var all = recorders[0]
        for other in recorders.dropFirst() { all.merge(other) }
        return all
    }
}
