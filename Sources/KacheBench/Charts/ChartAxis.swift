import Foundation

/// How a chart writes the numbers of an axis, its ticks and its value labels.
enum ChartValueStyle {
    /// Operations per second: 950, 812 k, 3.12 M.
    case rate
    /// Microseconds, milliseconds and the like: three significant digits.
    case plain
    /// Bytes, with binary prefixes: 4 KiB.
    case bytes
    /// A count, grouped by thousands: 10,000.
    case count

    func format(_ value: Double) -> String {
        switch self {
        case .rate: Format.rate(value)
        case .plain: Format.significant(value)
        case .bytes: Format.bytes(value)
        case .count: Format.grouped(Int(value.rounded()))
        }
    }

    /// A tick's label: as ``format(_:)``, without the trailing zeros that
    /// three significant digits give round numbers ("10 k", not "10.0 k").
    func tickLabel(_ value: Double) -> String {
        let label = format(value)
        guard let point = label.firstIndex(of: ".") else { return label }
        let digitsEnd = label[point...].dropFirst().firstIndex { !$0.isNumber } ?? label.endIndex
        var decimals = label[label.index(after: point)..<digitsEnd]
        while decimals.last == "0" { decimals = decimals.dropLast() }
        return String(label[..<point]) + (decimals.isEmpty ? "" : "." + decimals) + label[digitsEnd...]
    }
}

/// A value axis: its title, how values map to a position along it, and where its ticks go.
///
/// ```swift
/// let axis = ChartAxis.logarithmic(title: "Pool capacity", covering: [1_000, 100_000], style: .count)
/// axis.fraction(of: 10_000)   // 0.5: halfway, on a log scale
/// ```
struct ChartAxis {
    enum Scale {
        case linear
        /// Logarithmic; ticks at powers of `tickBase` (10, or 4 for bytes).
        case logarithmic(tickBase: Double)
    }

    var title: String
    var scale: Scale
    var lower: Double
    var upper: Double
    var style: ChartValueStyle
    /// Values with a gridline and a label, ascending.
    var ticks: [Double]

    /// Where `value` lies between `lower` (0) and `upper` (1); values outside
    /// the range lie outside 0…1, and a non-positive value on a log axis lies at 0.
    func fraction(of value: Double) -> Double {
        switch scale {
        case .linear:
            return (value - lower) / (upper - lower)
        case .logarithmic:
            guard value > 0 else { return 0 }
            return (log10(value) - log10(lower)) / (log10(upper) - log10(lower))
        }
    }

    /// A linear axis from 0 to a round number above every value in `values`,
    /// with room above the largest for its label (a fifth of the largest).
    static func linear(title: String, covering values: [Double], style: ChartValueStyle) -> ChartAxis {
        let largest = max(values.filter(\.isFinite).max() ?? 1, Double.leastNonzeroMagnitude)
        // Up to seven intervals: enough gridlines to read a bar's height by.
        let step = niceStep(largest * 1.2 / 7)
        let upper = (largest * 1.2 / step).rounded(.up) * step
        let ticks = stride(from: 0, through: upper + step / 2, by: step).map { $0 }
        return ChartAxis(title: title, scale: .linear, lower: 0, upper: upper, style: style, ticks: ticks)
    }

    /// A logarithmic axis over the positive values of `values`, widened by
    /// `padding` decades below and `headroom` decades above, so that no point
    /// sits on the frame and the labels above the largest fit in the plot.
    /// Ticks at powers of `tickBase`, and for a range of under three decades
    /// also at 2× and 5× each power of ten, so that a few labels are always there.
    static func logarithmic(title: String, covering values: [Double], style: ChartValueStyle, tickBase: Double = 10, padding: Double = 0.15, headroom: Double = 0.15) -> ChartAxis {
        let positive = values.filter { $0 > 0 && $0.isFinite }
        let smallest = positive.min() ?? 1
        let largest = positive.max() ?? 10
        let lower = pow(10, log10(smallest) - padding)
        let upper = pow(10, log10(max(largest, smallest * 10)) + headroom)
        var ticks: [Double] = []
        var power = pow(tickBase, (log(lower) / log(tickBase)).rounded(.down))
        while power <= upper {
            if power >= lower { ticks.append(power) }
            if tickBase == 10, log10(upper / lower) < 3 {
                ticks += [2 * power, 5 * power].filter { $0 >= lower && $0 <= upper }
            }
            power *= tickBase
        }
        return ChartAxis(title: title, scale: .logarithmic(tickBase: tickBase), lower: lower, upper: upper, style: style, ticks: ticks.sorted())
    }

    /// 1, 2 or 5 times a power of ten, the first at least `raw`.
    private static func niceStep(_ raw: Double) -> Double {
        let power = pow(10, log10(raw).rounded(.down))
        return [1.0, 2, 5, 10].map { $0 * power }.first { $0 >= raw } ?? 10 * power
    }
}
