import Kache
import KacheWorkloads

/// What a figure counts, which decides how it is printed.
enum FigureUnit: String, Codable {
    case perSecond = "per second"
    case microseconds = "µs"
    case milliseconds = "ms"
    case megabytesPerSecond = "MB/s"
    case bytes
    case ratio
    case count
}

/// One baseline measured beside a figure, in the same runs.
struct Comparison {
    /// What the baseline is, e.g. "Mutex<[String: Data]>".
    var baseline: String
    /// One sample per run, in the figure's unit.
    var samples: [Double]
}

/// One figure of a workload: a sample per run, and the baselines it is read against.
struct Figure {
    var name: String
    var unit: FigureUnit
    var higherIsBetter: Bool
    var samples: [Double]
    var comparisons: [Comparison] = []

    var statistics: SampleStatistics? { SampleStatistics(samples) }

    /// The median of the baseline named `baseline`, if the figure is read against it.
    func median(of baseline: String) -> Double? {
        comparisons.first { $0.baseline == baseline }.flatMap { SampleStatistics($0.samples)?.median }
    }

    /// The figure over the baseline, run by run (each run's pair was measured
    /// back to back, so the ratio cancels most of the machine's drift); nil
    /// where a baseline sample is zero.
    func ratios(to comparison: Comparison) -> [Double] {
        zip(samples, comparison.samples).compactMap { figure, baseline in
            baseline > 0 && figure.isFinite ? figure / baseline : nil
        }
    }
}

/// The figures of one workload in one configuration, over every run.
struct WorkloadResult {
    var workload: WorkloadID
    /// What distinguishes this result from others of the workload ("capacity 10,000", "disk budget ½").
    var variant: String?
    var durability: Durability
    var threads: Int
    var memoryBudget: Int
    var diskBudget: Int?
    var figures: [Figure]
    var notes: [String] = []

    func figure(_ name: String) -> Figure? {
        figures.first { $0.name == name }
    }

    /// "W2 read-hot", with the variant if any.
    var title: String {
        "\(workload.rawValue) \(workload.name)" + (variant.map { " (\($0))" } ?? "")
    }
}

/// Collects the figures of a workload run after run, in the order first recorded.
struct FigureRecorder {
    private(set) var figures: [Figure] = []

    /// Adds this run's `value` of the figure `name`.
    mutating func record(_ name: String, _ value: Double, unit: FigureUnit, higherIsBetter: Bool = true) {
        if let index = figures.firstIndex(where: { $0.name == name }) {
            figures[index].samples.append(value)
        } else {
            figures.append(Figure(name: name, unit: unit, higherIsBetter: higherIsBetter, samples: [value]))
        }
    }

    /// Lists the figure `name` without adding a sample, so that a run that
    /// could not measure it shows it as "–" rather than leaving it out.
    mutating func declare(_ name: String, unit: FigureUnit, higherIsBetter: Bool = true) {
        guard !figures.contains(where: { $0.name == name }) else { return }
        figures.append(Figure(name: name, unit: unit, higherIsBetter: higherIsBetter, samples: []))
    }

    /// Adds this run's `value` of `baseline`, measured beside the figure `name`
    /// (which must have been recorded first).
    mutating func compare(_ name: String, with baseline: String, _ value: Double) {
        guard let index = figures.firstIndex(where: { $0.name == name }) else {
            preconditionFailure("the baseline \(baseline) was recorded before its figure \(name)")
        }
        if let slot = figures[index].comparisons.firstIndex(where: { $0.baseline == baseline }) {
            figures[index].comparisons[slot].samples.append(value)
        } else {
            figures[index].comparisons.append(Comparison(baseline: baseline, samples: [value]))
        }
    }
}
