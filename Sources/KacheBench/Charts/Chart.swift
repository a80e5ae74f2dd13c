/// A chart as data, before it is drawn: a title, the series and their
/// values, the axes, and the notes under it. ``ChartRenderer`` draws it as SVG;
/// ``BenchCharts`` makes the five charts of a bench run.
struct Chart {
    /// One value: the median of the runs, with the smallest and largest.
    struct Value {
        var median: Double
        var min: Double
        var max: Double

        init(median: Double, min: Double, max: Double) {
            (self.median, self.min, self.max) = (median, min, max)
        }

        /// The median, min and max of `samples`; nil when there are none.
        init?(samples: [Double]) {
            guard let statistics = SampleStatistics(samples.filter(\.isFinite)) else { return nil }
            self.init(median: statistics.median, min: statistics.min, max: statistics.max)
        }

        /// Every figure of the value multiplied by `factor` (a per-entry share, a unit change).
        func scaled(by factor: Double) -> Value {
            Value(median: median * factor, min: min * factor, max: max * factor)
        }
    }

    /// A named series, drawn in one colour, e.g. "Kache" or a floor.
    struct Series {
        var name: String
        var color: String
    }

    /// Bars side by side, one per series, for each category; categories come in labelled groups.
    struct BarPlot {
        struct Category {
            var label: String
            /// One value per series, in the order of ``Chart/series``; nil where the run has none.
            var values: [Value?]
        }

        struct Group {
            var label: String
            var categories: [Category]
        }

        var groups: [Group]
        /// What the categories are, written under the group labels.
        var categoryTitle: String
    }

    /// Lines over a numeric x axis, one per series.
    struct LinePlot {
        struct Point {
            var x: Double
            var value: Value
        }

        var xAxis: ChartAxis
        /// One list of points per series, in the order of ``Chart/series``, ascending in x.
        var points: [[Point]]
    }

    enum Plot {
        case bars(BarPlot)
        case lines(LinePlot)
    }

    /// The file the chart is written to, without a folder, e.g. "w4-pool-capacity.svg".
    var fileName: String
    var title: String
    /// What was measured, how, and how to read it: a sentence or two under the title.
    var subtitle: String
    var series: [Series]
    var plot: Plot
    var yAxis: ChartAxis
    /// Where the figures come from (run, machine, commit), one line each, in small print at the bottom.
    var footnotes: [String]
    /// The width of the image in pixels; the height follows from the content.
    var width: Double = 800
}
