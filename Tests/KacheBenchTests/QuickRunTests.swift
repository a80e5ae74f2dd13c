import Foundation
import KacheTestSupport
import Testing

/// `kache-bench run --quick` end to end: the built binary, a fresh `$TMPDIR`,
/// the JSON it writes, and what it leaves behind.
@Suite("kache-bench run, end to end")
struct QuickRunTests {
    /// The peers' names as the report gives them, beside W1 and W8 in `async` and `sync`.
    static let peers = [
        "RocksDB (LZ4, a Put per set, WAL unsynced, final flush)",
        "SQLite (WAL, synchronous=NORMAL, an INSERT per set, final checkpoint)",
    ]

    /// Every workload, in `memory` durability (W5 needs a disk and is the
    /// next test's), W2 and W3 on one and two threads.
    @Test func quickRunOfEveryWorkloadCompletesAndWritesValidJSON() throws {
        let bench = try BenchProcess()
        defer { bench.cleanUp() }
        let json = bench.scratch.appendingPathComponent("run.json")
        let charts = bench.scratch.appendingPathComponent("charts")
        let outcome = try bench.run([
            "run", "--quick", "--runs", "1", "--threads", "1,2", "--durability", "memory",
            "--floor-time-limit", "2", "--quiet", "--json", json.path, "--charts", charts.path,
        ])
        #expect(outcome.status == 0, "\(outcome)")
        let leftovers = try bench.leftovers()
        #expect(leftovers.isEmpty, "left in $TMPDIR: \(leftovers)")

        let report = try BenchJSON.read(json)
        #expect(report.tool == "kache-bench")
        #expect(report.options.quick && report.options.runs == 1 && !report.options.directoryKept)
        #expect(report.options.peers == true, "on unless --no-peers")
        #expect(report.machine.cores >= 1 && !report.machine.kernel.isEmpty && report.machine.swiftVersion.contains("Swift"))
        #expect(report.results.map(\.workload) == ["W1", "W2", "W2", "W3", "W3", "W4", "W4", "W4", "W6", "W7"] + Array(repeating: "W9", count: 6),
                "W5 and W6's disk budget need a disk; W9's memory tier runs 3 traces at 2 budgets")
        #expect(report.results(workload: "W2").map(\.threads) == [1, 2])
        #expect(report.results(workload: "W3").map(\.threads) == [1, 2])
        #expect(report.results(workload: "W4").map(\.variant) == ["capacity 50", "capacity 500", "capacity 5,000"])
        expectWellFormed(report, durability: "memory")

        let w1 = try #require(report.results(workload: "W1").first)
        #expect(w1.memoryBudget == 1 << 30)
        #expect(w1.figure("sets/s")?.comparisons.map(\.baseline) == ["Mutex<[String: Data]>"])
        #expect(w1.figure("durable sets/s") == nil && w1.figure("bytes on disk") == nil)
        for w2 in report.results(workload: "W2") {
            #expect(w2.figure("hit ratio")?.samples == [1])
            #expect(["gets/s", "p50 µs", "p99 µs", "p99.9 µs"].allSatisfy { w2.figure($0)?.comparisons.first?.baseline == "Mutex<[String: Data]>" })
            #expect(w2.figure("gets/s")?.comparisons.map(\.baseline) == ["Mutex<[String: Data]>", "64 × Mutex<[String: Data]>"])
            #expect(w2.figure("async gets/s")?.comparisons.map(\.baseline) == ["the sync API (same run)"])
            #expect(w2.figure("async gets/s")?.samples.allSatisfy { $0 > 0 } == true)
        }
        for w3 in report.results(workload: "W3") {
            #expect(w3.figure("p99 µs") != nil)
            #expect(w3.figure("ops/s")?.comparisons.map(\.baseline) == ["Mutex<[String: Data]>", "64 × Mutex<[String: Data]>"])
            #expect(w3.figure("async ops/s")?.comparisons.map(\.baseline) == ["the sync API (same run)"])
        }
        for w4 in report.results(workload: "W4") {
            #expect(w4.figure("sets/s")?.comparisons.first?.baseline == "sorted array (Kache 2012)")
            if let floor = w4.figure("evictions")?.comparisons.first {
                #expect(floor.samples == w4.figure("evictions")?.samples, "the heap-based Pool and the 2012 sorted array evict the same keys")
            }
        }
        #expect(report.results(workload: "W4").first?.figure("evictions")?.comparisons.isEmpty == false)
        let w6 = try #require(report.results(workload: "W6").first)
        #expect(w6.figure("MB/s written")?.comparisons.isEmpty == true, "nothing is compressed in memory, so no codec floor applies")
        #expect(w6.figure("MB/s encoded, no file")?.comparisons.first?.baseline == "raw LZ4 compress")
        let w7 = try #require(report.results(workload: "W7").first)
        #expect(w7.figure("items popped")?.samples == [25_000])

        #expect(!report.targets.isEmpty)
        // In memory there are no durable sets and no bytes on disk to draw.
        let drawn = try FileManager.default.contentsOfDirectory(atPath: charts.path).sorted()
        #expect(drawn == ["latency-percentiles.svg", "w2-w3-threads.svg", "w4-pool-capacity.svg"])
        #expect(outcome.stdout.contains("chart: \(charts.appendingPathComponent("w4-pool-capacity.svg").path)"))
        #expect(outcome.stdout.contains("not drawn: w1-durable-sets.svg: no W1 result in a disk mode"))
        #expect(outcome.stdout.contains("W1 load — memory, 1 thread"))
        #expect(outcome.stdout.contains("Targets"))
        #expect(outcome.stderr.isEmpty, "--quiet prints nothing on stderr: \(outcome.stderr)")
    }

    /// The workloads that need a disk, in `async` durability.
    @Test func quickRunOnDiskCompletesAndWritesValidJSON() throws {
        let bench = try BenchProcess()
        defer { bench.cleanUp() }
        let json = bench.scratch.appendingPathComponent("disk.json")
        let outcome = try bench.run(["run", "--quick", "--runs", "2", "--workload", "W1,W5,W6", "--quiet", "--json", json.path])
        #expect(outcome.status == 0, "\(outcome)")
        let leftovers = try bench.leftovers()
        #expect(leftovers.isEmpty, "left in $TMPDIR: \(leftovers)")

        let report = try BenchJSON.read(json)
        #expect(report.results.map(\.workload) == ["W1", "W5", "W6", "W6"])
        expectWellFormed(report, durability: "async", runs: 2)
        for result in report.results {
            #expect(result.figure("bytes on disk").map { $0.samples.allSatisfy { $0 > 0 } } == true, "\(result.workload)")
        }
        let w1 = try #require(report.results(workload: "W1").first)
        #expect(w1.figure("sets/s")?.comparisons.map(\.baseline) == ["temp file + rename"])
        #expect(w1.figure("durable sets/s")?.comparisons.map(\.baseline)
            == ["temp file + rename", "temp file + rename, then syncfs", "LZ4 records appended to one file, then syncfs"] + Self.peers)
        for name in ["durable sets/s", "allocated ÷ raw bytes", "ms to ready"] {
            let peers = try #require(w1.figure(name)?.comparisons.filter { Self.peers.contains($0.baseline) }, "\(name)")
            #expect(peers.map(\.baseline) == Self.peers && peers.allSatisfy { $0.samples.count == 2 && $0.samples.allSatisfy { $0 > 0 } }, "\(name)")
        }
        let w5 = try #require(report.results(workload: "W5").first)
        for result in [w1, w5] {
            #expect(result.figure("allocated ÷ raw bytes").map { $0.samples.allSatisfy { $0 > 0 && $0 < 100 } } == true, "\(result.workload)")
            #expect(result.figure("files in the directory").map { $0.samples.allSatisfy { $0 >= 1 } } == true, "\(result.workload)")
        }
        #expect(w5.figure("keys lost")?.samples == [0, 0])
        #expect(w5.figure("wrong values")?.samples == [0, 0])
        #expect(w5.figure("ms to ready").map { $0.samples.allSatisfy { $0 > 0 } } == true)
        let w6 = try #require(report.results(workload: "W6").first)
        #expect(w6.figure("hit ratio")?.samples == [1, 1])
        #expect(w6.memoryBudget < 100 * 256 * 1024 / 4, "most of a quick run's blobs are read from files, as in the standard run")
        #expect(w6.figure("file bytes ÷ bytes set").map { $0.samples.allSatisfy { $0 >= 1 && $0 < 1.01 } } == true)
        #expect(w6.figure("MB/s written")?.comparisons.first?.baseline == "raw LZ4 compress")
        #expect(w6.figure("MB/s encoded, no file")?.comparisons.first?.baseline == "raw LZ4 compress")
        #expect(w6.figure("MB/s decoded, no file")?.comparisons.first?.baseline == "raw LZ4 decompress")
        #expect(w6.figure("MB/s decoded, no file").map { $0.samples.allSatisfy { $0 > 0 } } == true, "every file decodes")
        let budget = try #require(report.results(workload: "W6").last)
        #expect(budget.variant == "disk budget ½" && budget.diskBudget == 100 * 256 * 1024 / 2)
        #expect(budget.figure("allocated ÷ disk budget").map { $0.samples.allSatisfy { $0 <= 1 } } == true)
        #expect(budget.figure("budget evictions").map { $0.samples.allSatisfy { $0 > 0 } } == true)
        #expect(budget.figure("MB/s written")?.comparisons.first?.baseline == "W6 without a disk budget")
    }

    /// W9 in `async`: the memory tier (in `memory` durability) and the disk
    /// budget, each trace at each budget, beside the four simulated policies.
    @Test func quickRunOfTheHitRatioWorkload() throws {
        let bench = try BenchProcess()
        defer { bench.cleanUp() }
        let json = bench.scratch.appendingPathComponent("w9.json")
        let outcome = try bench.run(["run", "--quick", "--runs", "1", "--workload", "W9", "--quiet", "--json", json.path])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(try bench.leftovers().isEmpty)

        let report = try BenchJSON.read(json)
        #expect(report.results.map(\.durability) == Array(repeating: ["memory", "async"], count: 6).flatMap { $0 })
        #expect(report.results.first?.variant == "(a) Zipf · memory tier · 1 % budget (50 values)")
        #expect(report.results.last?.variant == "(c) Zipf, TTL 60 s / 1 h / 1 d · disk budget · 10 % budget (500 values)")
        for result in report.results {
            let hitRatio = try #require(result.figure("hit ratio"))
            #expect(hitRatio.comparisons.map(\.baseline) == ["FIFO", "LRU", "S3-FIFO", "earliest expiry"])
            let ratios = hitRatio.samples + hitRatio.comparisons.flatMap(\.samples)
            #expect(ratios.allSatisfy { $0 > 0.05 && $0 < 1 }, "\(result.variant ?? "") \(ratios)")
            #expect(result.diskBudget == nil || result.durability == "async")
        }
        // A larger budget hits more, for Kache and for every baseline.
        let small = try #require(report.results.first?.figure("hit ratio"))
        let large = try #require(report.results.first { $0.variant?.hasPrefix("(a) Zipf · memory tier · 10 %") == true }?.figure("hit ratio"))
        #expect(zip(small.samples + small.comparisons.flatMap(\.samples), large.samples + large.comparisons.flatMap(\.samples)).allSatisfy { $0 < $1 })
        #expect(report.targets.filter { $0.target.hasPrefix("W9 memory tier hit ratio") }.count == 6)
        #expect(report.targets.filter { $0.target.hasPrefix("W9 disk budget hit ratio") }.count == 6)
        #expect(outcome.stdout.contains("W9 hit ratio ((a) Zipf · memory tier · 1 % budget (50 values)) — memory, 1 thread"))
    }

    /// `kache-bench trace` writes the trace W9 replays, as CSV.
    @Test func traceCommandWritesTheTraceAsCSV() throws {
        let bench = try BenchProcess()
        defer { bench.cleanUp() }
        let csv = bench.scratch.appendingPathComponent("c.csv")
        let outcome = try bench.run(["trace", "c", "--quick", "--output", csv.path])
        #expect(outcome.status == 0, "\(outcome)")
        let lines = try String(contentsOf: csv, encoding: .utf8).split(separator: "\n")
        #expect(lines.count == 50_001)
        #expect(lines.first == "time,obj_id,obj_size,ttl")
        #expect(lines.dropFirst().allSatisfy { $0.split(separator: ",").count == 4 })
        #expect(lines[1].hasPrefix("0,") && lines[2].hasPrefix("1,") && lines[1].hasSuffix(",1024,3600"))
    }

    /// W8 and W4d, which only run on disk, in `async` durability.
    @Test func quickRunOfTheSmallEntryWorkloadsOnDisk() throws {
        let bench = try BenchProcess()
        defer { bench.cleanUp() }
        let json = bench.scratch.appendingPathComponent("small.json")
        let outcome = try bench.run(["run", "--quick", "--runs", "1", "--workload", "w8,w4d", "--quiet", "--json", json.path])
        #expect(outcome.status == 0, "\(outcome)")
        let leftovers = try bench.leftovers()
        #expect(leftovers.isEmpty, "left in $TMPDIR: \(leftovers)")

        let report = try BenchJSON.read(json)
        #expect(report.results.map(\.workload) == ["W8", "W4d"])
        expectWellFormed(report, durability: "async")
        let w8 = try #require(report.results(workload: "W8").first)
        #expect(w8.figure("durable sets/s")?.comparisons.map(\.baseline) == ["LZ4 records appended to one file, then syncfs"] + Self.peers)
        #expect(w8.figure("allocated ÷ raw bytes")?.comparisons.map(\.baseline) == Self.peers)
        #expect(w8.figure("ms to ready")?.comparisons.map(\.baseline) == Self.peers)
        #expect(w8.notes.contains { $0.hasPrefix("peers: RocksDB ") && $0.contains(" and SQLite ") }, "\(w8.notes)")
        #expect(w8.figure("durable sets/s").map { $0.samples.allSatisfy { $0 > 0 } } == true)
        #expect(w8.figure("keys lost")?.samples == [0] && w8.figure("wrong values")?.samples == [0])
        #expect(w8.figure("keys past their TTL")?.samples == [0], "a quick run ends long before the shortest TTL, 60 s")
        #expect(w8.figure("ms to ready").map { $0.samples.allSatisfy { $0 > 0 } } == true)
        #expect(w8.figure("allocated ÷ raw bytes").map { $0.samples.allSatisfy { $0 > 0 && $0 < 100 } } == true)
        #expect(w8.figure("files in the directory").map { $0.samples.allSatisfy { $0 >= 1 && $0 <= 50_002 } } == true,
                "at most a file per entry, the manifest and the lock")

        let w4d = try #require(report.results(workload: "W4d").first)
        #expect(w4d.figure("sets/s")?.comparisons.map(\.baseline) == ["W4 in memory"])
        #expect(w4d.figure("write amplification").map { $0.samples.allSatisfy { $0 > 0 && $0 < 10 } } == true,
                "Kache wrote entries, and not ten times what was set")
        let dead = try #require(w4d.figure("dead ÷ segment bytes"))
        #expect(dead.samples.allSatisfy { (0...1).contains($0) })
        let segments = try #require(w4d.figure("segment files")?.samples.first)
        #expect(dead.samples.isEmpty == (segments == 0), "dead bytes are measured exactly when there are segments")
        #expect(outcome.stdout.contains("W4d churn on disk — async, 1 thread"))

        let targets = report.targets.map(\.target)
        #expect(targets.contains("W8 ready in under 200 ms (50,000 entries)") && targets.contains("W4d write amplification ≤ 2.0"))
        #expect(targets.contains("W8 keys lost = 0 (every run)") && targets.contains("W8 files in the directory < 1,000 (50,000 entries)"))
    }

    /// W1 in `fsync` on 2 writer threads, beside a file per entry, and its charts.
    @Test func quickRunOfWriterThreadsInFsync() throws {
        let bench = try BenchProcess()
        defer { bench.cleanUp() }
        let json = bench.scratch.appendingPathComponent("fsync.json")
        let charts = bench.scratch.appendingPathComponent("charts")
        let outcome = try bench.run([
            "run", "--quick", "--runs", "1", "--workload", "W1", "--durability", "fsync", "--threads", "2",
            "--quiet", "--json", json.path, "--charts", charts.path,
        ])
        #expect(outcome.status == 0, "\(outcome)")
        let report = try BenchJSON.read(json)
        expectWellFormed(report, durability: "fsync")
        #expect(report.results.map(\.threads) == [1, 2])
        let writers = try #require(report.results.last)
        #expect(writers.variant == "2 writer threads")
        #expect(writers.figure("durable sets/s")?.comparisons.map(\.baseline) == ["segmentThreshold 0 (a file per entry)"])
        #expect(writers.figure("sets/s")?.comparisons.map(\.baseline) == ["segmentThreshold 0 (a file per entry)"])
        #expect(writers.figure("files in the directory").map { $0.samples.allSatisfy { $0 >= 1 } } == true)
        let w1 = try #require(report.results.first)
        #expect(w1.figure("ms to ready")?.comparisons.isEmpty == true, "the peers flush once, so fsync runs without them")
        #expect(!w1.notes.contains { $0.hasPrefix("peers:") })
        #expect(report.targets.contains { $0.target == "W1 durable sets/s on 2 writer threads ≥ 2× segmentThreshold 0 (a file per entry)" })
        #expect(outcome.stdout.contains("chart: \(charts.appendingPathComponent("w1-durable-sets.svg").path)"))
        #expect(outcome.stdout.contains("chart: \(charts.appendingPathComponent("bytes-per-entry.svg").path)"))
    }

    @Test func keptDirectoryHoldsTheLastRunsCache() throws {
        let bench = try BenchProcess()
        defer { bench.cleanUp() }
        let kept = bench.scratch.appendingPathComponent("demo")
        // A file per entry (--segment-threshold 0), so that the entries can be counted as files.
        let outcome = try bench.run(["run", "--quick", "--runs", "2", "--workload", "W1", "--dir", kept.path, "--segment-threshold", "0", "--quiet"])
        #expect(outcome.status == 0, "\(outcome)")
        #expect(outcome.stdout.contains("kept"))
        #expect(FileManager.default.fileExists(atPath: kept.appendingPathComponent("manifest").path))
        let objects = kept.appendingPathComponent("objects")
        let shards = try FileManager.default.contentsOfDirectory(atPath: objects.path)
        let files = try shards.reduce(0) { $0 + (try FileManager.default.contentsOfDirectory(atPath: objects.appendingPathComponent($1).path)).count }
        #expect(files == 5_000, "the quick W1 sets 5,000 keys")
        let leftovers = try bench.leftovers()
        #expect(leftovers.isEmpty, "left in $TMPDIR: \(leftovers)")
        let besideDir = try FileManager.default.contentsOfDirectory(atPath: bench.scratch.path)
        #expect(besideDir.allSatisfy { !$0.hasPrefix(".kache-bench-floor-") }, "the baselines' folder beside --dir is removed: \(besideDir)")

        let again = try bench.run(["run", "--quick", "--runs", "1", "--workload", "W7", "--durability", "memory", "--dir", kept.path, "--quiet"])
        #expect(again.status == 0, "a kept cache directory may be given again: \(again)")
    }

    @Test func refusesToWipeAFolderThatIsNotACacheDirectory() throws {
        let bench = try BenchProcess()
        defer { bench.cleanUp() }
        let folder = bench.scratch.appendingPathComponent("precious")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let file = folder.appendingPathComponent("thesis.txt")
        try Data("draft".utf8).write(to: file)
        let outcome = try bench.run(["run", "--quick", "--workload", "W1", "--dir", folder.path])
        #expect(outcome.status != 0)
        #expect(outcome.stderr.contains("not a Kache cache directory"), "\(outcome)")
        #expect(try Data(contentsOf: file) == Data("draft".utf8))
    }

    @Test func temporaryDirectoryIsRemovedWhenTheRunFails() throws {
        let bench = try BenchProcess()
        defer { bench.cleanUp() }
        let unwritable = bench.scratch.appendingPathComponent("missing-folder/run.json")
        let outcome = try bench.run(["run", "--quick", "--runs", "1", "--workload", "W7", "--durability", "memory", "--quiet", "--json", unwritable.path])
        #expect(outcome.status != 0, "\(outcome)")
        let leftovers = try bench.leftovers()
        #expect(leftovers.isEmpty, "left in $TMPDIR: \(leftovers)")
    }

    /// Interrupted at a different moment each round: a signal that lands while
    /// the run is opening its cache once made the run fail on the folder the
    /// handler had just removed and exit 1 before the handler's own exit.
    @Test(arguments: [SIGINT, SIGTERM])
    func temporaryDirectoryIsRemovedWhenInterrupted(signal: Int32) throws {
        let bench = try BenchProcess()
        defer { bench.cleanUp() }
        for round in 0..<8 {
            let process = try bench.start(["run", "--quick", "--runs", "3", "--workload", "W1,W4", "--quiet"])
            // Wait until the run has written into its cache directory.
            let deadline = Date().addingTimeInterval(60)
            var started = false
            while !started, !process.hasExited(), Date() < deadline {
                Thread.sleep(forTimeInterval: 0.01)
                started = try bench.leftovers().contains { name in
                    FileManager.default.fileExists(atPath: bench.temporary.appendingPathComponent("\(name)/cache/objects").path)
                }
            }
            #expect(started, "round \(round): the run never created its cache directory")
            Thread.sleep(forTimeInterval: Double(round) * 0.007)
            process.signal(signal)
            let outcome = try bench.finish(process, timeout: 30)
            #expect(outcome.status == 128 + signal, "round \(round): \(outcome)")
            let leftovers = try bench.leftovers()
            #expect(leftovers.isEmpty, "round \(round): left in $TMPDIR: \(leftovers)")
        }
    }

    /// Every figure has a sample per run, a finite summary, and a ratio per run for each baseline.
    private func expectWellFormed(_ report: BenchJSON, durability: String, runs: Int = 1, sourceLocation: SourceLocation = #_sourceLocation) {
        for result in report.results {
            #expect(result.durability == durability, sourceLocation: sourceLocation)
            #expect(result.figure("peak RSS").map { $0.samples.allSatisfy { $0 > 1_048_576 } } == true, "\(result.workload)", sourceLocation: sourceLocation)
            for figure in result.figures {
                let label = "\(result.workload) \(result.variant ?? "") \(figure.name)"
                // The one figure a run may list without a value: dead bytes while there are no segments.
                if figure.samples.isEmpty, result.workload == "W4d", figure.name == "dead ÷ segment bytes" {
                    #expect(figure.summary == nil, "\(label)", sourceLocation: sourceLocation)
                    continue
                }
                #expect(figure.samples.count == runs, "\(label)", sourceLocation: sourceLocation)
                #expect(figure.summary.map { $0.median.isFinite && $0.min <= $0.median && $0.median <= $0.max } == true,
                        "\(label)", sourceLocation: sourceLocation)
                for comparison in figure.comparisons {
                    #expect(comparison.samples.count == runs, "\(label) / \(comparison.baseline)", sourceLocation: sourceLocation)
                    #expect(comparison.ratios.count == runs || comparison.samples.contains(0), "\(label) / \(comparison.baseline)",
                            sourceLocation: sourceLocation)
                }
            }
        }
    }
}
