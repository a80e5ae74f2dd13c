import ArgumentParser
import Foundation
import KacheWorkloads

/// `kache-bench trace`: writes one of W9's traces as CSV, so that another
/// simulator replays the very requests W9 does (scripts/hit-ratio.sh feeds
/// them to libCacheSim).
struct TraceCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "trace",
        abstract: "Write a W9 hit-ratio trace as CSV: time (ms), key index, size (bytes), TTL (s), with a header.",
        discussion: """
            Examples:
              kache-bench trace a --output a.csv           trace (a), Zipf, at the standard sizes
              kache-bench trace c --quick --output c.csv   trace (c), mixed TTLs, at the quick sizes
            """
    )

    @Argument(help: "The trace: a (Zipf), b (30 % one-hit wonders) or c (mixed TTLs).")
    var trace: HitRatioTrace.Kind

    @Option(help: "The file to write.")
    var output: String

    @Flag(help: "The quick sizes (about 20× smaller).")
    var quick = false

    @Option(help: "The seed of the generators.")
    var seed: UInt64 = SplitMix64.defaultSeed

    func run() throws {
        let sizes: WorkloadSizes = quick ? .quick : .standard
        let trace = HitRatioTrace(trace, keyCount: sizes.keyCount, requests: sizes.hitRatioRequests, seed: seed)
        try Self.csv(trace, valueBytes: sizes.textValueBytes).write(to: URL(fileURLWithPath: output), options: .atomic)
    }

    static let header = "time,obj_id,obj_size,ttl"

    /// The trace as CSV, a line per request: its simulated time in
    /// milliseconds, its key index, the value's size, and the TTL of its set
    /// on a miss in seconds.
    static func csv(_ trace: HitRatioTrace, valueBytes: Int) -> Data {
        var text = header + "\n"
        text.reserveCapacity(trace.count * 28)
        for index in trace.keys.indices {
            text += "\(HitRatioTrace.time(ofRequest: index)),\(trace.keys[index]),\(valueBytes),\(trace.ttlSeconds[index])\n"
        }
        return Data(text.utf8)
    }
}

extension HitRatioTrace.Kind: ExpressibleByArgument {}
