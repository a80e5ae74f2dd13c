import Foundation
import Testing
@testable import KacheBench

/// The five charts drawn from two quick runs kept beside the tests (every
/// workload in `async` on 1 and 2 threads, and W1 in `sync` and `fsync`),
/// read back as XML and checked against the figures in the JSON.
@Suite("kache-bench charts")
struct BenchChartsTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures")
    static let asyncRun = fixtures.appendingPathComponent("quick-async.json")
    static let durabilityRun = fixtures.appendingPathComponent("quick-w1-sync-fsync.json")

    static func sources() throws -> [ChartSource] {
        try [asyncRun, durabilityRun].map { ChartSource(name: $0.lastPathComponent, report: try BenchReport.read(from: $0.path)) }
    }

    /// Draws the fixtures' charts and reads each back.
    static func drawn() throws -> [String: (chart: Chart, svg: SVGOutline)] {
        let outcome = BenchCharts.charts(from: try sources())
        #expect(outcome.skipped.isEmpty, "\(outcome.skipped)")
        return Dictionary(uniqueKeysWithValues: outcome.charts.map { chart in
            (chart.fileName, (chart, SVGOutline(Data(ChartRenderer.render(chart).utf8))))
        })
    }

    @Test func everyChartIsWellFormedSVGWithTitleAxesLegendAndFootnote() throws {
        let charts = try Self.drawn()
        #expect(Set(charts.keys) == [
            BenchCharts.poolCapacityFile, BenchCharts.latencyFile, BenchCharts.durableSetsFile,
            BenchCharts.bytesPerEntryFile, BenchCharts.readThroughputFile,
        ])
        let commit = try #require(BenchJSON.read(Self.asyncRun).machine.gitCommit)
        for (file, (chart, svg)) in charts {
            #expect(svg.parseError == nil, "\(file): \(String(describing: svg.parseError))")
            #expect(svg.root == "svg", "\(file)")
            #expect(svg.texts(ofClass: "chart-title").joined(separator: " ") == chart.title, "\(file)")
            #expect(!svg.texts(ofClass: "subtitle").isEmpty, "\(file)")
            #expect(svg.texts(ofClass: "axis-title").contains(chart.yAxis.title), "\(file)")
            #expect(svg.texts(ofClass: "axis-title").count == 2, "a title on each axis: \(file)")
            #expect(svg.texts(ofClass: "legend-entry") == chart.series.map(\.name), "\(file)")
            #expect(svg.seriesNames == chart.series.map(\.name), "\(file)")
            let footnote = svg.texts(ofClass: "footnote").joined(separator: " ")
            #expect(footnote.contains("commit \(commit.prefix(10))") && footnote.contains("2 cores") && footnote.contains("quick sizes"), "\(file): \(footnote)")
            #expect(svg.texts(ofClass: "tick").count >= 3, "\(file)")
        }
    }

    @Test func poolChartDrawsKacheBesideTheSortedArrayOnLogAxes() throws {
        let (chart, svg) = try #require(try Self.drawn()[BenchCharts.poolCapacityFile])
        let json = try BenchJSON.read(Self.asyncRun).results(workload: "W4")
        #expect(svg.texts(ofClass: "axis-title") == ["sets per second", "Pool capacity (entries)"])
        guard case .lines(let lines) = chart.plot else { Issue.record("W4 is a line chart"); return }
        #expect(lines.points.map { $0.map(\.x) } == [[50, 500, 5_000], [50, 500, 5_000]])
        #expect(lines.points[0].map(\.value.median) == json.compactMap { $0.figure("sets/s")?.summary?.median })
        #expect(lines.points[1].map(\.value.median) == json.compactMap { $0.figure("sets/s")?.comparisons.first?.summary?.median })
        #expect(svg.marks(of: "Kache Pool").count == 3 && svg.marks(of: "sorted array (Kache 2012)").count == 3)
        // Log scale: a tenfold step in capacity is the same distance wherever it is.
        let centers = svg.marks(of: "Kache Pool").compactMap { $0.attributes["cx"].flatMap(Double.init) }
        #expect(centers.count == 3 && abs((centers[1] - centers[0]) - (centers[2] - centers[1])) <= 0.2, "\(centers)")
        #expect(svg.tooltips(of: "Kache Pool").first?.hasPrefix("Pool capacity (entries) 50: Kache Pool ") == true)
        // The fixture's floor ran out of its 2 s at the largest capacity; the chart says its rate flatters it.
        #expect(json.last?.figure("evictions")?.comparisons.isEmpty == true)
        #expect(chart.subtitle.contains("At capacity 5,000 the sorted array hit its time limit"))
    }

    @Test func latencyChartHasEveryPercentileOfEveryWorkloadAndThreadCount() throws {
        let (chart, svg) = try #require(try Self.drawn()[BenchCharts.latencyFile])
        guard case .bars(let bars) = chart.plot else { Issue.record("latency is a bar chart"); return }
        #expect(bars.groups.map(\.label) == ["W2 read-hot, 1 thread", "W2 read-hot, 2 threads", "W3 mixed, 1 thread", "W3 mixed, 2 threads"])
        #expect(bars.groups.allSatisfy { $0.categories.map(\.label) == ["p50", "p99", "p99.9"] })
        #expect(svg.texts(ofClass: "group-label") == bars.groups.map(\.label))
        let json = try BenchJSON.read(Self.asyncRun)
        let expected = (json.results(workload: "W2") + json.results(workload: "W3")).flatMap { result in
            ["p50 µs", "p99 µs", "p99.9 µs"].map { result.figure($0) }
        }
        #expect(bars.groups.flatMap(\.categories).map { $0.values[0]?.median } == expected.map { $0?.summary?.median })
        #expect(bars.groups.flatMap(\.categories).map { $0.values[1]?.median } == expected.map { $0?.comparisons.first?.summary?.median })
        #expect(svg.marks(of: "Kache").count == 12 && svg.marks(of: "Mutex<[String: Data]> (floor)").count == 12)
        #expect(svg.tooltips(of: "Kache").first?.hasPrefix("W2 read-hot, 1 thread, p50: Kache ") == true)
    }

    @Test func durableChartSetsEachModeBesideItsFileSystemFloors() throws {
        let (chart, svg) = try #require(try Self.drawn()[BenchCharts.durableSetsFile])
        guard case .bars(let bars) = chart.plot else { Issue.record("a bar chart"); return }
        #expect(bars.groups.flatMap(\.categories).map(\.label) == ["async", "sync", "fsync"], "two runs, merged")
        // fsync's floor flushes too, under a longer name; it is the same series.
        #expect(chart.series.map(\.name) == ["Kache, durable sets/s", "floor: temp file + rename", "floor: temp file + rename, then syncfs"])
        let fsync = try #require(BenchJSON.read(Self.durabilityRun).results.first { $0.durability == "fsync" }?.figure("durable sets/s"))
        let drawn = try #require(bars.groups.first?.categories.last)
        #expect(drawn.values.map { $0?.median } == [fsync.summary?.median] + fsync.comparisons.map { $0.summary?.median })
        #expect(svg.marks(of: "floor: temp file + rename").count == 3)
        let footnotes = svg.texts(ofClass: "footnote").joined(separator: " ")
        #expect(footnotes.contains("quick-async.json") && footnotes.contains("quick-w1-sync-fsync.json"), "both runs are named")
    }

    @Test func bytesPerEntryChartDividesTheDirectoryByItsEntries() throws {
        let (chart, svg) = try #require(try Self.drawn()[BenchCharts.bytesPerEntryFile])
        guard case .bars(let bars) = chart.plot else { Issue.record("a bar chart"); return }
        #expect(bars.groups.map(\.label) == ["1 KiB text value (W1)", "256 KiB blob value (W6)"])
        let w1 = try #require(BenchJSON.read(Self.asyncRun).results(workload: "W1").first)
        let load = try #require(bars.groups.first?.categories.first)
        #expect(load.values[0]?.median == 1024)
        let fileBytes = try #require(w1.figure("file bytes")?.summary?.median)
        let allocated = try #require(w1.figure("bytes on disk")?.summary?.median)
        #expect(abs((load.values[1]?.median ?? 0) - fileBytes / 5_000) < 1e-6)
        #expect(abs((load.values[2]?.median ?? 0) - allocated / 5_000) < 1e-6)
        #expect(allocated / 5_000 >= 4_096, "every entry file takes at least a 4 KiB block")
        let w6 = try #require(BenchJSON.read(Self.asyncRun).results(workload: "W6").first)
        let blob = try #require(bars.groups.last?.categories.first)
        let blobAllocated = try #require(w6.figure("allocated ÷ bytes set")?.summary?.median)
        #expect(abs((blob.values[2]?.median ?? 0) - blobAllocated * 262_144) < 1e-6)
        #expect(svg.marks(of: "allocated on disk").count == 2)
        #expect(svg.texts(ofClass: "tick").contains("4 KiB"), "a byte axis ticks at powers of 4")
    }

    @Test func bytesPerEntryChartSetsRunsOfTwoCommitsSideBySide() throws {
        var sources = try Self.sources()
        var after = sources[0]
        after.report.machine.gitCommit = "0123456789abcdef"
        after.report.machine.gitDirty = false
        sources.append(after)
        let chart = try #require(BenchCharts.charts(from: sources).charts.first { $0.fileName == BenchCharts.bytesPerEntryFile })
        guard case .bars(let bars) = chart.plot else { Issue.record("a bar chart"); return }
        let before = "at " + (try #require(sources[0].commit))
        #expect(bars.groups.map { $0.categories.map(\.label) } == [[before, "at 0123456"], [before, "at 0123456"]])
    }

    @Test func bytesPerEntryChartLeavesOutARunOfAnotherModeAtAnotherCommit() throws {
        var sources = try Self.sources()
        sources[1].report.machine.gitCommit = "0123456789abcdef"
        let chart = try #require(BenchCharts.charts(from: sources).charts.first { $0.fileName == BenchCharts.bytesPerEntryFile })
        guard case .bars(let bars) = chart.plot else { Issue.record("a bar chart"); return }
        #expect(bars.groups.map { $0.categories.count } == [1, 1], "W1 in sync and fsync alone is not a second format")
        #expect(chart.footnotes.count == 1)
    }

    @Test func throughputChartHasBothThreadCountsOfW2AndW3() throws {
        let (chart, svg) = try #require(try Self.drawn()[BenchCharts.readThroughputFile])
        guard case .bars(let bars) = chart.plot else { Issue.record("a bar chart"); return }
        #expect(bars.groups.map(\.label) == ["W2 read-hot, gets/s", "W3 mixed, ops/s"])
        #expect(bars.groups.allSatisfy { $0.categories.map(\.label) == ["1 thread", "2 threads"] })
        let w3 = try BenchJSON.read(Self.asyncRun).results(workload: "W3")
        #expect(bars.groups[1].categories.map { $0.values[0]?.median } == w3.map { $0.figure("ops/s")?.summary?.median })
        #expect(svg.marks(of: "Kache").count == 4)
    }

    @Test func aLaterRunReplacesTheSameResultOfAnEarlierOne() throws {
        var sources = try Self.sources()
        var rerun = sources[0]
        rerun.report.results = rerun.report.results.filter { $0.workload == "W4" }
        for index in rerun.report.results.indices {
            rerun.report.results[index].figures = rerun.report.results[index].figures.map { figure in
                var figure = figure
                if figure.name == "sets/s" { figure.samples = [1_234, 1_234] }
                return figure
            }
        }
        sources.append(rerun)
        let chart = try #require(BenchCharts.charts(from: sources).charts.first { $0.fileName == BenchCharts.poolCapacityFile })
        guard case .lines(let lines) = chart.plot else { Issue.record("a line chart"); return }
        #expect(lines.points[0].map(\.value.median) == [1_234, 1_234, 1_234])
    }

    @Test func chartsWithoutTheirFiguresAreSkippedWithAReason() throws {
        var queueOnly = try Self.sources()[0]
        queueOnly.report.results = queueOnly.report.results.filter { $0.workload == "W7" }
        let outcome = BenchCharts.charts(from: [queueOnly])
        #expect(outcome.charts.isEmpty)
        #expect(outcome.skipped.count == 5 && outcome.skipped.allSatisfy { $0.contains(".svg: no ") }, "\(outcome.skipped)")
    }

    @Test func chartCommandWritesTheSVGFilesAndSaysWhere() throws {
        let bench = try BenchProcess()
        defer { bench.cleanUp() }
        let folder = bench.scratch.appendingPathComponent("charts")
        let outcome = try bench.run(["chart", Self.asyncRun.path, Self.durabilityRun.path, "--out", folder.path])
        #expect(outcome.status == 0, "\(outcome)")
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        #expect(files == [
            BenchCharts.bytesPerEntryFile, BenchCharts.latencyFile, BenchCharts.durableSetsFile,
            BenchCharts.poolCapacityFile, BenchCharts.readThroughputFile,
        ].sorted())
        for file in files {
            #expect(outcome.stdout.contains("chart: \(folder.appendingPathComponent(file).path)"))
            #expect(SVGOutline(try Data(contentsOf: folder.appendingPathComponent(file))).parseError == nil, "\(file)")
        }

        let notJSON = bench.scratch.appendingPathComponent("notes.txt")
        try Data("not a run".utf8).write(to: notJSON)
        let refused = try bench.run(["chart", notJSON.path, "--out", folder.path])
        #expect(refused.status != 0 && refused.stderr.contains("is not the JSON of a kache-bench run"), "\(refused)")
    }
}
