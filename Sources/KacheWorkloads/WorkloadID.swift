/// The standard workloads of WORKLOADS.md, in its order, as a tool lists and runs them.
///
/// ```swift
/// for workload in WorkloadID.allCases {
///     print(workload.rawValue, workload.name, workload.description(sizes: .quick))
/// }
/// ```
public enum WorkloadID: String, CaseIterable, Sendable {
    /// Sets N text values in key order.
    case w1 = "W1"
    /// Zipf gets after W1.
    case w2 = "W2"
    /// Zipf gets and sets, 90 : 10, after W1.
    case w3 = "W3"
    /// Sets into a small Pool, random TTLs on a simulated clock.
    case w4 = "W4"
    /// Close, reopen and read every key after W1 and save.
    case w5 = "W5"
    /// Large incompressible values.
    case w6 = "W6"
    /// Pushes and pops on a Queue.
    case w7 = "W7"
    /// A million small text values set, saved, and read back after a reopen.
    case w8 = "W8"
    /// W4 in a disk mode, for what churn costs the files.
    case w4d = "W4d"
    /// Cache-aside hit ratio under a budget, beside FIFO, LRU, S3-FIFO and earliest expiry.
    case w9 = "W9"

    /// The short name, as in the table: "load", "read-hot", …
    public var name: String {
        switch self {
        case .w1: "load"
        case .w2: "read-hot"
        case .w3: "mixed"
        case .w4: "churn"
        case .w5: "restart"
        case .w6: "blobs"
        case .w7: "queue"
        case .w8: "many-small"
        case .w4d: "churn on disk"
        case .w9: "hit ratio"
        }
    }

    /// What the workload does, with the numbers of `sizes`.
    public func description(sizes: WorkloadSizes = .standard) -> String {
        let n = grouped(sizes.keyCount)
        let text = "\(grouped(sizes.textValueBytes))-byte text values"
        let ttl = "TTL \(grouped(Int(sizes.ttlSeconds))) s"
        switch self {
        case .w1:
            return "set N = \(n) \(text), keys in index order, \(ttl)"
        case .w2:
            return "after W1: \(grouped(sizes.readOps)) gets, keys by Zipf"
        case .w3:
            return "after W1: \(grouped(sizes.mixedOps)) ops by Zipf, \(WorkloadDraws.getPercent) % get / "
                + "\(100 - WorkloadDraws.getPercent) % set (fresh \(text.dropLast()), \(ttl))"
        case .w4:
            return "\(grouped(sizes.churnOps)) sets of \(grouped(sizes.churnValueBytes))-byte text values "
                + "into a Pool of capacity \(grouped(sizes.churnCapacity)), keys by Zipf over "
                + "\(grouped(sizes.churnKeyCount)) keys, TTL uniform in [1, \(WorkloadDraws.maxRandomTTLSeconds)] s "
                + "on a simulated clock that advances \(WorkloadDraws.churnTickMilliseconds) ms per op"
        case .w5:
            return "after W1 (N = \(n)) and save: close the cache, open the same directory anew, load, "
                + "then get every key once in index order"
        case .w6:
            return "\(grouped(sizes.blobCount)) sets of \(grouped(sizes.blobBytes / 1024)) KiB blob values, "
                + "then \(grouped(sizes.blobGets)) gets uniform over them"
        case .w7:
            return "\(grouped(sizes.queuePushes)) pushes into a Queue of capacity \(grouped(sizes.queueCapacity)), "
                + "a pop after every second push"
        case .w8:
            let ttl = WorkloadDraws.manySmallTTLRange
            return "set \(grouped(sizes.manySmallCount)) text values of \(grouped(sizes.manySmallValueBytes)) bytes, keys in index order, "
                + "TTL uniform in [\(grouped(Int(ttl.lowerBound))), \(grouped(Int(ttl.upperBound)))] s (drawn after each value); "
                + "save, close, reopen, then get every \(grouped(sizes.manySmallReadStride))th key"
        case .w4d:
            return "W4 in a disk mode: \(grouped(sizes.churnOps)) sets of \(grouped(sizes.churnValueBytes))-byte text values "
                + "into a Pool of capacity \(grouped(sizes.churnCapacity)), keys by Zipf over \(grouped(sizes.churnKeyCount)) keys, "
                + "TTL uniform in [1, \(WorkloadDraws.maxRandomTTLSeconds)] s on the simulated clock"
        case .w9:
            let ttls = HitRatioTrace.ttlChoices.map { grouped(Int($0)) }.joined(separator: ", ")
            return "cache-aside (a get; on a miss, a set of a \(grouped(sizes.textValueBytes))-byte text value): "
                + "\(grouped(sizes.hitRatioRequests)) requests over N = \(n) keys by Zipf 0.99; traces (a) Zipf alone, "
                + "(b) \(HitRatioTrace.freshKeyPercent) % of requests to fresh keys, (c) Zipf with TTLs of \(ttls) s "
                + "on a simulated clock of \(HitRatioTrace.millisecondsPerRequest) ms per request; budgets of 1 % and 10 % of the keys' values"
        }
    }

    /// The figures a run of the workload reports.
    public var figure: String {
        switch self {
        case .w1: "sets/s"
        case .w2: "gets/s, hit ratio, p50/p99/p999 µs"
        case .w3: "ops/s, p99 µs"
        case .w4: "sets/s, evictions, expirations"
        case .w5: "ms to ready, cold gets/s, keys lost (must be 0)"
        case .w6: "MB/s written, MB/s read, bytes on disk ÷ bytes set"
        case .w7: "ops/s"
        case .w8: "durable sets/s, allocated bytes ÷ raw bytes, files in the directory, ms to ready, keys lost (must be 0)"
        case .w4d: "sets/s, write amplification (bytes written to disk ÷ bytes set), dead bytes ÷ stored bytes at the end"
        case .w9: "hit ratio beside FIFO, LRU, S3-FIFO and earliest expiry simulated on the same trace"
        }
    }

    /// The thread counts to run it with: every workload on 1 thread, W2 and W3
    /// also on 2 (the machine has 2 cores), each thread with its own stream.
    public var threadCounts: [Int] {
        switch self {
        case .w2, .w3: [1, 2]
        default: [1]
        }
    }
}

/// `1234567` as "1,234,567", the way WORKLOADS.md writes numbers, whatever
/// the locale. Package-visible so the benchmark's tables write counts the same way.
package func grouped(_ number: Int) -> String {
    let digits = String(number.magnitude)
    var out = ""
    for (offset, digit) in digits.enumerated() {
        if offset > 0, (digits.count - offset) % 3 == 0 { out.append(",") }
        out.append(digit)
    }
    return number < 0 ? "-" + out : out
}
