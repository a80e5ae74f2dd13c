import ArgumentParser
import Foundation
import Kache

/// `kache-bench ready`: the time an existing cache directory takes to open,
/// until its first get, as W5 and W8 measure it. Each open is of a fresh copy
/// (an open sweeps expired entries and writes, so the original is never
/// touched), made before the clock starts; the copy's files are in the page
/// cache, as after a process restart. Beside the wall clock, the CPU time
/// the open took on every thread. For profiling the open alone:
/// `perf record -g kache-bench ready DIR --times 20`.
struct ReadyCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "ready",
        abstract: "Measure how long an existing cache directory takes to open, until its first get.",
        discussion: """
            Examples:
              kache-bench run --workload W8 --runs 1 --dir /tmp/w8   make W8's directory
              kache-bench ready /tmp/w8 --times 9                   open copies of it 9 times
            """
    )

    @Argument(help: "The cache directory (left unchanged: each open is of a copy).")
    var directory: String

    @Option(help: "How many times to open it.")
    var times = 5

    @Option(help: "The key of the first get (a miss counts as well).")
    var key = "key-0000000"

    @Flag(help: "Open with the clock stopped at the manifest's last change, so that no entry has expired since and runs compare.")
    var atSaveTime = false

    func validate() throws {
        guard times >= 1 else { throw ValidationError("--times must be at least 1") }
    }

    func run() throws {
        let source = URL(fileURLWithPath: directory)
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("kache-bench-ready-\(getpid())")
        defer { try? FileManager.default.removeItem(at: scratch) }
        var milliseconds: [Double] = []
        var cpuMilliseconds: [Double] = []
        var entries = 0
        var configuration = BenchCache.configuration(.async)
        if atSaveTime {
            let saved = try FileManager.default.attributesOfItem(atPath: source.appendingPathComponent("manifest").path)[.modificationDate] as? Date
            configuration = BenchCache.configuration(.async, clock: ManualClock(saved ?? Date()))
        }
        for _ in 1...times {
            try? FileManager.default.removeItem(at: scratch)
            try FileManager.default.copyItem(at: source, to: scratch)
            try? FileManager.default.removeItem(at: scratch.appendingPathComponent("lock"))
            let cpuBefore = Self.cpuSeconds()
            let (cache, seconds) = try MonotonicClock.measure {
                let cache = try Kache(directory: scratch, configuration: configuration)
                _ = cache.data(forKey: key)
                return cache
            }
            cpuMilliseconds.append((Self.cpuSeconds() - cpuBefore) * 1000)
            entries = cache.statistics.entries
            try cache.close()
            milliseconds.append(seconds * 1000)
        }
        let wall = SampleStatistics(milliseconds)!
        let cpu = SampleStatistics(cpuMilliseconds)!
        print(String(format: "ms to ready: %.1f (%.1f–%.1f) over %d opens; %d entries", wall.median, wall.min, wall.max, times, entries))
        print(String(format: "CPU ms (every thread): %.1f (%.1f–%.1f)", cpu.median, cpu.min, cpu.max))
    }

    /// The process's CPU time so far, user and system, on every thread: a
    /// figure that a busy machine disturbs less than the wall clock.
    static func cpuSeconds() -> Double {
        var usage = rusage()
        getrusage(RUSAGE_SELF.rawValue, &usage)
        func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1_000_000 }
        return seconds(usage.ru_utime) + seconds(usage.ru_stime)
    }
}
