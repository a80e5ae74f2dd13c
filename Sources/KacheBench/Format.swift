import Foundation
import KacheWorkloads

/// How the table writes numbers: three significant digits, SI prefixes for
/// rates, binary prefixes for bytes, the same in every locale.
enum Format {
    /// 3,120,000 → "3.12 M"; 812,400 → "812 k"; 950 → "950".
    static func rate(_ value: Double) -> String {
        guard value.isFinite else { return "–" }
        let magnitude = abs(value)
        if magnitude >= 1e9 { return significant(value / 1e9) + " G" }
        if magnitude >= 1e6 { return significant(value / 1e6) + " M" }
        if magnitude >= 1e3 { return significant(value / 1e3) + " k" }
        return significant(value)
    }

    /// 1 << 30 → "1 GiB"; 268,435,516 → "256 MiB"; 1,500 → "1.46 KiB".
    static func bytes(_ value: Double) -> String {
        guard value.isFinite else { return "–" }
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var scaled = value
        var unit = 0
        while abs(scaled) >= 1024, unit < units.count - 1 {
            scaled /= 1024
            unit += 1
        }
        return (scaled == scaled.rounded() ? String(Int(scaled)) : significant(scaled)) + " " + units[unit]
    }

    /// 0.8734 → "0.873×"; 47.2 → "47.2×".
    static func ratio(_ value: Double) -> String {
        value.isFinite ? significant(value) + "×" : "–"
    }

    /// A value in its figure's unit.
    static func value(_ value: Double, unit: FigureUnit) -> String {
        switch unit {
        case .perSecond: rate(value)
        case .microseconds: significant(value) + " µs"
        case .milliseconds: significant(value) + " ms"
        case .megabytesPerSecond: significant(value) + " MB/s"
        case .bytes: bytes(value)
        case .ratio: significant(value, digits: 4)
        case .count: grouped(Int(value.rounded()))
        }
    }

    /// "median (min–max)", or just the value when every run gave the same.
    static func summary(_ statistics: SampleStatistics, unit: FigureUnit) -> String {
        let median = value(statistics.median, unit: unit)
        guard statistics.min != statistics.max else { return median }
        return "\(median) (\(value(statistics.min, unit: unit))–\(value(statistics.max, unit: unit)))"
    }

    /// "median (min–max)" of ratios.
    static func ratioSummary(_ statistics: SampleStatistics) -> String {
        let median = ratio(statistics.median)
        guard statistics.min != statistics.max else { return median }
        return "\(median) (\(ratio(statistics.min))–\(ratio(statistics.max)))"
    }

    /// 1234567 → "1,234,567", as the workload descriptions write it.
    static func grouped(_ number: Int) -> String {
        KacheWorkloads.grouped(number)
    }

    /// `value` with `digits` significant digits and no exponent: 3.14159 → "3.14", 0.0123 → "0.0123", 31415 → "31415".
    static func significant(_ value: Double, digits: Int = 3) -> String {
        guard value.isFinite else { return "–" }
        guard value != 0 else { return "0" }
        let order = Int(floor(log10(abs(value))))
        let decimals = max(0, digits - 1 - order)
        return String(format: "%.\(decimals)f", value)
    }
}
