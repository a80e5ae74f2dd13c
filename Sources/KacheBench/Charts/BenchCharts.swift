import Foundation
import Kache
import KacheWorkloads

/// One run's JSON, as the charts read it.
struct ChartSource {
    /// How the footnotes name it: the JSON's file name, or "this run".
    var name: String
    var report: BenchReport

    var sizes: WorkloadSizes { report.options.quick ? .quick : .standard }

    /// The commit the run's binary was built from, short, or nil when the run didn't know it.
    var commit: String? {
        report.machine.gitCommit.map { String($0.prefix(7)) + (report.machine.gitDirty == true ? "+" : "") }
    }

    /// One line for a chart's footnotes: the command, the sizes, the machine and the commit.
    var footnote: String {
        let options = report.options
        let sizes = options.quick ? "quick sizes (about 20× smaller than WORKLOADS.md)" : "standard sizes"
        let runs = "\(options.runs) run\(options.runs == 1 ? "" : "s") each"
        return "\(name): \(report.command.joined(separator: " ")), on \(report.date.prefix(10)), \(sizes), \(runs); \(report.machine.summary)."
    }
}

/// The five charts of a bench run, made from the JSON `kache-bench run --json`
/// writes: what the tables of docs/PERFORMANCE.md say, drawn.
///
/// Several runs may be given: a result of a later run replaces the same
/// workload, variant, mode and thread count of an earlier one (a W4 rerun
/// after a fix replaces the full run's W4), and the bytes-per-entry chart
/// sets runs side by side, so that a format change can be shown before and after.
///
/// ```swift
/// let sources = [ChartSource(name: "bench.json", report: try BenchReport.read(from: "bench.json"))]
/// let outcome = try BenchCharts.write(sources, to: "docs/charts")
/// ```
enum BenchCharts {
    /// The charts drawn, and for each one that could not be, why.
    struct Outcome {
        var charts: [Chart] = []
        var skipped: [String] = []
    }

    /// Draws every chart the runs have figures for, as `<folder>/<chart>.svg`.
    /// - Returns: the paths written, and why any chart was left out.
    static func write(_ sources: [ChartSource], to folder: String) throws -> (written: [String], skipped: [String]) {
        let outcome = charts(from: sources)
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        var written: [String] = []
        for chart in outcome.charts {
            let path = URL(fileURLWithPath: folder).appendingPathComponent(chart.fileName).path
            try Data(ChartRenderer.render(chart).utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            written.append(path)
        }
        return (written, outcome.skipped)
    }

    /// The charts the runs have figures for, in the order of the issue that asked for them.
    static func charts(from sources: [ChartSource]) -> Outcome {
        let results = merged(sources)
        var outcome = Outcome()
        let makers: [(file: String, missing: String, make: () -> Chart?)] = [
            (poolCapacityFile, "no W4 result with a sorted-array floor", { poolCapacity(results, sources) }),
            (latencyFile, "no W2 or W3 result with latency percentiles", { latency(results, sources) }),
            (durableSetsFile, "no W1 result in a disk mode (async, sync or fsync)", { durableSets(results, sources) }),
            (bytesPerEntryFile, "no W1 or W6 result in a disk mode", { bytesPerEntry(sources) }),
            (readThroughputFile, "no W2 or W3 result", { readThroughput(results, sources) }),
        ]
        for maker in makers {
            if let chart = maker.make() {
                outcome.charts.append(chart)
            } else {
                outcome.skipped.append("\(maker.file): \(maker.missing)")
            }
        }
        return outcome
    }

    static let poolCapacityFile = "w4-pool-capacity.svg"
    static let latencyFile = "latency-percentiles.svg"
    static let durableSetsFile = "w1-durable-sets.svg"
    static let bytesPerEntryFile = "bytes-per-entry.svg"
    static let readThroughputFile = "w2-w3-threads.svg"

    // MARK: - Colours

    private static let kacheColor = "#1f6feb"
    /// The floors, in the order a figure lists its baselines.
    private static let floorColors = ["#8c959f", "#d4a72c", "#2da44e", "#cf222e", "#8250df"]
    /// Decades above the tallest bar on a log axis, for its label, which may stand on end.
    private static let barLabelHeadroom = 0.35
    private static let whiskerNote = "Bars: median of the runs; whiskers: smallest to largest run."

    // MARK: - 1. W4: a Pool's sets/s against its capacity

    private static func poolCapacity(_ results: [SourcedResult], _ sources: [ChartSource]) -> Chart? {
        let pools = inOneMode(results.filter { $0.result.workload == WorkloadID.w4.rawValue })
            .compactMap { item -> (capacity: Double, item: SourcedResult)? in
                guard let capacity = capacity(of: item.result) else { return nil }
                return (capacity, item)
            }
            .sorted { $0.capacity < $1.capacity }
        guard let first = pools.first?.item else { return nil }
        var kache: [Chart.LinePlot.Point] = []
        var floor: [Chart.LinePlot.Point] = []
        for (capacity, item) in pools {
            let figure = item.result.figure("sets/s")
            if let value = figure.flatMap(Chart.Value.init) { kache.append(.init(x: capacity, value: value)) }
            if let value = figure?.comparison(Baselines.sortedArray).flatMap(Chart.Value.init) { floor.append(.init(x: capacity, value: value)) }
        }
        guard !kache.isEmpty, !floor.isEmpty else { return nil }
        let sizes = sources[first.source].sizes
        let stopped = pools.filter { $0.item.result.notes.contains { $0.hasPrefix(W4Churn.floorStoppedNote) } }
        var subtitle = "W4 churn: \(Format.grouped(sizes.churnOps)) sets of \(sizes.churnValueBytes)-byte values, keys by Zipf over "
            + "\(Format.grouped(sizes.churnKeyCount)), into a full Pool on a simulated clock; \(first.result.durability) durability, 1 thread. "
            + "Kache evicts through an expiry heap; the 2012 Kache kept its keys in an array sorted by expiry. Both axes are logarithmic; "
            + "points are medians, whiskers span the runs."
        if !stopped.isEmpty {
            let capacities = stopped.map { Format.grouped(Int($0.capacity)) }.joined(separator: " and ")
            subtitle += " At capacity \(capacities) the sorted array hit its time limit before the last set; its rate there is over the sets it did while still filling, which flatters it."
        }
        let values = (kache + floor).flatMap { [$0.value.min, $0.value.max] }
        return Chart(
            fileName: poolCapacityFile,
            title: "W4: a Pool's sets/s by capacity, beside the 2012 sorted array",
            subtitle: subtitle,
            series: [Chart.Series(name: "Kache Pool", color: kacheColor), Chart.Series(name: Baselines.sortedArray, color: floorColors[1])],
            plot: .lines(Chart.LinePlot(
                xAxis: .logarithmic(title: "Pool capacity (entries)", covering: pools.map(\.capacity), style: .count),
                points: [kache, floor]
            )),
            yAxis: .logarithmic(title: "sets per second", covering: values, style: .rate),
            footnotes: footnotes(pools.map(\.item), sources)
        )
    }

    /// 10000 from "capacity 10,000".
    private static func capacity(of result: BenchReport.ResultRecord) -> Double? {
        guard let variant = result.variant, variant.hasPrefix("capacity ") else { return nil }
        return Double(variant.filter(\.isNumber))
    }

    // MARK: - 2. Latency percentiles beside the floor

    private static func latency(_ results: [SourcedResult], _ sources: [ChartSource]) -> Chart? {
        let reads = readResults(results).filter { item in LatencyRecorder.reported.contains { item.result.figure($0.name) != nil } }
        guard let first = reads.first else { return nil }
        let floorName = Baselines.dictionary
        let groups = reads.map { item in
            Chart.BarPlot.Group(label: groupLabel(item.result), categories: LatencyRecorder.reported.map { reported in
                let figure = item.result.figure(reported.name)
                return .init(label: String(reported.name.prefix { $0 != " " }), values: [
                    figure.flatMap(Chart.Value.init), figure?.comparison(floorName).flatMap(Chart.Value.init),
                ])
            })
        }
        let sizes = sources[first.source].sizes
        return Chart(
            fileName: latencyFile,
            title: "Latency percentiles: Kache beside a bare dictionary",
            subtitle: "Time per operation at the 50th, 99th and 99.9th percentile, from a second pass timing every operation "
                + "(W2: \(Format.grouped(sizes.readOps)) gets by Zipf; W3: \(Format.grouped(sizes.mixedOps)) operations, 90 % gets, 10 % sets), "
                + "\(first.result.durability) durability. Lower is better; the axis is logarithmic. \(whiskerNote)",
            series: [Chart.Series(name: "Kache", color: kacheColor), Chart.Series(name: "\(floorName) (floor)", color: floorColors[0])],
            plot: .bars(Chart.BarPlot(groups: groups, categoryTitle: "percentile, by workload and thread count")),
            yAxis: .logarithmic(title: "latency (µs)", covering: extremes(groups), style: .plain, headroom: barLabelHeadroom),
            footnotes: footnotes(reads, sources),
            width: max(800, 160 + 200 * Double(groups.count))
        )
    }

    // MARK: - 3. W1 durable sets/s per durability mode beside the file-system floors

    private static func durableSets(_ results: [SourcedResult], _ sources: [ChartSource]) -> Chart? {
        let loads = results
            .filter { $0.result.workload == WorkloadID.w1.rawValue && $0.result.threads == 1 && $0.result.figure("durable sets/s") != nil }
            .sorted { modeOrder($0.result.durability) < modeOrder($1.result.durability) }
        guard !loads.isEmpty else { return nil }
        // A floor is one series across the modes: in fsync the rename floor
        // flushes too, under a longer name, but it is the same floor's work.
        func floorSeries(_ baseline: String) -> String {
            baseline
                .replacingOccurrences(of: Baselines.renameFsync, with: Baselines.rename)
        }
        var floorNames: [String] = []
        for item in loads {
            for comparison in item.result.figure("durable sets/s")?.comparisons ?? [] where !floorNames.contains(floorSeries(comparison.baseline)) {
                floorNames.append(floorSeries(comparison.baseline))
            }
        }
        let categories = loads.map { item in
            let figure = item.result.figure("durable sets/s")
            let floors = floorNames.map { name in
                figure?.comparisons.first { floorSeries($0.baseline) == name }.flatMap { Chart.Value(samples: $0.samples) }
            }
            return Chart.BarPlot.Category(label: item.result.durability, values: [figure.flatMap(Chart.Value.init)] + floors)
        }
        let groups = [Chart.BarPlot.Group(label: "W1 load, 1 thread", categories: categories)]
        let sizes = sources[loads[0].source].sizes
        var subtitle = "W1: \(Format.grouped(sizes.keyCount)) sets of \(Format.bytes(Double(sizes.textValueBytes))) text values into an empty cache; "
            + "Kache's clock stops when the final save() returns. The floors write the same values as files, each to a temporary name renamed into place"
        if loads.contains(where: { $0.result.durability == Durability.fsync.rawValue }) {
            subtitle += " (in fsync, with the file and its folder flushed: \(Baselines.renameFsync))"
        }
        if floorNames.contains(Baselines.append) {
            subtitle += "; the append floor writes them as Kache's records, LZ4-compressed, to one file, then flushes it with syncfs"
        }
        if floorNames.contains(where: Baselines.peers.contains) {
            subtitle += "; the peers, RocksDB and SQLite, store the same entries through their C APIs and flush once at the end"
        }
        subtitle += ". Higher is better. \(whiskerNote)"
        return Chart(
            fileName: durableSetsFile,
            title: "Durable sets/s per mode, beside the file system's own rate",
            subtitle: subtitle,
            series: [Chart.Series(name: "Kache, durable sets/s", color: kacheColor)]
                + floorNames.enumerated().map { index, name in
                    // A peer is another store doing the same work, not a floor under Kache's.
                    let kind = Baselines.peers.contains(name) ? "peer" : "floor"
                    return Chart.Series(name: "\(kind): \(name)", color: floorColors[index % floorColors.count])
                },
            plot: .bars(Chart.BarPlot(groups: groups, categoryTitle: "durability mode")),
            yAxis: .linear(title: "sets per second", covering: extremes(groups), style: .rate),
            footnotes: footnotes(loads, sources)
        )
    }

    // MARK: - 4. Bytes on disk per entry, by value size

    /// The W1 and W6 figures of each commit side by side, not merged: with a
    /// run from before a change of the file format and one from after it, the
    /// chart shows the two. Runs of one commit are merged as for the other charts.
    private static func bytesPerEntry(_ sources: [ChartSource]) -> Chart? {
        struct Measured {
            var label: String
            var load: SourcedResult?
            var blobs: SourcedResult?
        }
        var commits: [(label: String, sources: [Int])] = []
        for (index, source) in sources.enumerated() {
            let label = source.commit.map { "at \($0)" } ?? source.name
            if let slot = commits.firstIndex(where: { $0.label == label }) {
                commits[slot].sources.append(index)
            } else {
                commits.append((label, [index]))
            }
        }
        func measuresBytes(_ item: SourcedResult) -> Bool {
            let result = item.result
            guard result.durability != Durability.memory.rawValue else { return false }
            return (result.workload == WorkloadID.w1.rawValue && result.figure("bytes on disk") != nil)
                || (result.workload == WorkloadID.w6.rawValue && result.variant == nil && result.figure("allocated ÷ bytes set") != nil)
        }
        // One mode for every commit, so that a run of another mode alone (W1
        // in sync and fsync beside a full async run) isn't taken for another format.
        guard let mode = inOneMode(merged(sources).filter(measuresBytes)).first?.result.durability else { return nil }
        let measured = commits.compactMap { commit -> Measured? in
            let results = merged(commit.sources.map { sources[$0] })
                .map { SourcedResult(result: $0.result, source: commit.sources[$0.source]) }
                .filter { measuresBytes($0) && $0.result.durability == mode }
            let load = results.first { $0.result.workload == WorkloadID.w1.rawValue }
            let blobs = results.first { $0.result.workload == WorkloadID.w6.rawValue }
            return load == nil && blobs == nil ? nil : Measured(label: commit.label, load: load, blobs: blobs)
        }
        guard let firstSource = measured.first.flatMap({ $0.load ?? $0.blobs })?.source else { return nil }
        let sideBySide = measured.count > 1
        func runLabel(_ item: Measured) -> String { sideBySide ? item.label : "" }
        var groups: [Chart.BarPlot.Group] = []
        let textBytes = Double(sources[firstSource].sizes.textValueBytes)
        let loadCategories = measured.compactMap { item -> Chart.BarPlot.Category? in
            guard let load = item.load?.result, let source = item.load?.source else { return nil }
            let entries = Double(sources[source].sizes.keyCount)
            return .init(label: sideBySide ? runLabel(item) : "W1, \(Format.grouped(Int(entries))) entries", values: [
                Chart.Value(median: textBytes, min: textBytes, max: textBytes),
                load.figure("file bytes").flatMap(Chart.Value.init)?.scaled(by: 1 / entries),
                load.figure("bytes on disk").flatMap(Chart.Value.init)?.scaled(by: 1 / entries),
            ])
        }
        if !loadCategories.isEmpty {
            groups.append(.init(label: "\(Format.bytes(textBytes)) text value (W1)", categories: loadCategories))
        }
        let blobBytes = Double(sources[firstSource].sizes.blobBytes)
        let blobCategories = measured.compactMap { item -> Chart.BarPlot.Category? in
            guard let blobs = item.blobs?.result, let source = item.blobs?.source else { return nil }
            return .init(label: sideBySide ? runLabel(item) : "W6, \(Format.grouped(sources[source].sizes.blobCount)) blobs", values: [
                Chart.Value(median: blobBytes, min: blobBytes, max: blobBytes),
                blobs.figure("file bytes ÷ bytes set").flatMap(Chart.Value.init)?.scaled(by: blobBytes),
                blobs.figure("allocated ÷ bytes set").flatMap(Chart.Value.init)?.scaled(by: blobBytes),
            ])
        }
        if !blobCategories.isEmpty {
            groups.append(.init(label: "\(Format.bytes(blobBytes)) blob value (W6)", categories: blobCategories))
        }
        let drawn = measured.flatMap { [$0.load, $0.blobs].compactMap { $0 } }
        let modes = Set(drawn.map(\.result.durability)).sorted { modeOrder($0) < modeOrder($1) }
        return Chart(
            fileName: bytesPerEntryFile,
            title: "Bytes on disk per entry, by value size",
            subtitle: "The cache directory after close(), divided by its entries: the file lengths summed, and the blocks the file system "
                + "allocated (as du counts them, folders and manifest included); beside them, the value as set. Text values are "
                + "LZ4-compressed, blobs stored raw; \(modes.joined(separator: ", ")) durability. Lower is better; the axis is logarithmic. "
                + (sideBySide ? "Each commit's run is drawn under its name. " : "") + whiskerNote,
            series: [
                Chart.Series(name: "value as set", color: floorColors[0]),
                Chart.Series(name: "file length", color: "#54aeff"),
                Chart.Series(name: "allocated on disk", color: "#0a3069"),
            ],
            plot: .bars(Chart.BarPlot(groups: groups, categoryTitle: sideBySide ? "value size, by the commit of the run" : "value size")),
            yAxis: .logarithmic(title: "bytes per entry", covering: extremes(groups), style: .bytes, tickBase: 4, headroom: barLabelHeadroom),
            footnotes: footnotes(drawn, sources)
        )
    }

    // MARK: - 5. W2 and W3 throughput by thread count beside the floor

    private static func readThroughput(_ results: [SourcedResult], _ sources: [ChartSource]) -> Chart? {
        let reads = readResults(results)
        guard let first = reads.first else { return nil }
        var groups: [Chart.BarPlot.Group] = []
        for workload in [WorkloadID.w2, .w3] {
            let figureName = workload == .w2 ? "gets/s" : "ops/s"
            let categories = reads.filter { $0.result.workload == workload.rawValue }.compactMap { item -> Chart.BarPlot.Category? in
                guard let figure = item.result.figure(figureName) else { return nil }
                return .init(label: threadsLabel(item.result.threads), values: [
                    Chart.Value(samples: figure.samples),
                    item.result.figure("async " + figureName).flatMap { Chart.Value(samples: $0.samples) },
                    figure.comparison(Baselines.dictionary).flatMap(Chart.Value.init),
                    figure.comparison(Baselines.shardedDictionary).flatMap(Chart.Value.init),
                ])
            }
            if !categories.isEmpty {
                groups.append(.init(label: "\(workload.rawValue) \(workload.name), \(figureName)", categories: categories))
            }
        }
        guard !groups.isEmpty else { return nil }
        let sizes = sources[first.source].sizes
        return Chart(
            fileName: readThroughputFile,
            title: "W2 gets/s and W3 ops/s by thread count, beside bare dictionaries",
            subtitle: "W2: \(Format.grouped(sizes.readOps)) gets by Zipf after W1; W3: \(Format.grouped(sizes.mixedOps)) operations by Zipf, "
                + "90 % gets and 10 % sets; the operations are split between the threads (between tasks for the async API); "
                + "the floors: one dictionary behind one lock, and 64 behind a lock each; "
                + "\(first.result.durability) durability, on a machine of \(sources[first.source].report.machine.cores) cores. Higher is better. \(whiskerNote)",
            series: [
                Chart.Series(name: "Kache", color: kacheColor), Chart.Series(name: "Kache, async API", color: "#79c0ff"),
                Chart.Series(name: "\(Baselines.dictionary) (floor)", color: floorColors[0]),
                Chart.Series(name: "\(Baselines.shardedDictionary) (floor)", color: floorColors[2]),
            ],
            plot: .bars(Chart.BarPlot(groups: groups, categoryTitle: "workload and thread count")),
            yAxis: .linear(title: "operations per second", covering: extremes(groups), style: .rate),
            footnotes: footnotes(reads, sources)
        )
    }

    // MARK: - Reading the runs

    /// A result, with the index of the run it came from.
    struct SourcedResult {
        var result: BenchReport.ResultRecord
        var source: Int
    }

    /// Every run's results, a later run's replacing an earlier run's of the
    /// same workload, variant, mode and thread count; in first-seen order.
    static func merged(_ sources: [ChartSource]) -> [SourcedResult] {
        var results: [SourcedResult] = []
        for (index, source) in sources.enumerated() {
            for result in source.report.results {
                let item = SourcedResult(result: result, source: index)
                if let slot = results.firstIndex(where: { sameConfiguration($0.result, result) }) {
                    results[slot] = item
                } else {
                    results.append(item)
                }
            }
        }
        return results
    }

    private static func sameConfiguration(_ one: BenchReport.ResultRecord, _ other: BenchReport.ResultRecord) -> Bool {
        one.workload == other.workload && one.variant == other.variant && one.durability == other.durability && one.threads == other.threads
    }

    /// The results of one durability mode: `async`, the default, when there, else the first one's.
    private static func inOneMode(_ results: [SourcedResult]) -> [SourcedResult] {
        let modes = results.map(\.result.durability)
        guard let mode = modes.contains(Durability.async.rawValue) ? Durability.async.rawValue : modes.first else { return [] }
        return results.filter { $0.result.durability == mode }
    }

    /// W2 then W3, each by ascending thread count, in one mode.
    private static func readResults(_ results: [SourcedResult]) -> [SourcedResult] {
        inOneMode(results.filter { $0.result.workload == WorkloadID.w2.rawValue || $0.result.workload == WorkloadID.w3.rawValue })
            .sorted { ($0.result.workload, $0.result.threads) < ($1.result.workload, $1.result.threads) }
    }

    private static func modeOrder(_ mode: String) -> Int {
        Durability.allCases.firstIndex { $0.rawValue == mode } ?? Durability.allCases.count
    }

    private static func groupLabel(_ result: BenchReport.ResultRecord) -> String {
        "\(result.workload) \(result.name), \(threadsLabel(result.threads))"
    }

    private static func threadsLabel(_ threads: Int) -> String {
        "\(threads) thread\(threads == 1 ? "" : "s")"
    }

    /// Every median, min and max in the plot, for its axis to cover.
    private static func extremes(_ groups: [Chart.BarPlot.Group]) -> [Double] {
        groups.flatMap(\.categories).flatMap(\.values).compactMap { $0 }.flatMap { [$0.min, $0.max] }
    }

    /// The footnotes of the runs `results` came from, each once, in run order.
    private static func footnotes(_ results: [SourcedResult], _ sources: [ChartSource]) -> [String] {
        Set(results.map(\.source)).sorted().map { sources[$0].footnote }
    }
}

extension BenchReport.FigureRecord {
    /// The baseline called `baseline`, if the figure was measured beside it.
    func comparison(_ baseline: String) -> BenchReport.ComparisonRecord? {
        comparisons.first { $0.baseline == baseline }
    }
}

extension BenchReport.ResultRecord {
    func figure(_ name: String) -> BenchReport.FigureRecord? {
        figures.first { $0.name == name }
    }
}

extension Chart.Value {
    /// A figure's median and range over its runs.
    init?(_ figure: BenchReport.FigureRecord) {
        self.init(samples: figure.samples)
    }

    /// A baseline's median and range over its runs.
    init?(_ comparison: BenchReport.ComparisonRecord) {
        self.init(samples: comparison.samples)
    }
}
