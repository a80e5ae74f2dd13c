import Foundation

/// The table `kache-bench run` prints on stdout at the end: a block per
/// workload and configuration, each figure as median (min–max) beside its
/// baselines and the ratios, then the targets.
enum ReportTable {
    static func render(_ report: BenchReport) -> String {
        var out: [String] = []
        let options = report.options
        out.append("kache-bench run: \(options.quick ? "quick sizes (about 20× smaller than WORKLOADS.md)" : "standard sizes of WORKLOADS.md"), "
            + "\(options.runs) run\(options.runs == 1 ? "" : "s") each, seed \(options.seed)")
        out.append("machine: \(report.machine.summary)")
        out.append("cache directory: \(options.directory)" + (options.directoryKept ? " (kept: it holds the cache of the last run)" : " (temporary, removed)"))
        out.append("command: \(report.command.joined(separator: " "))")
        out.append("Figures are median (min–max) over the runs; a ratio is the figure over the baseline beside it, run by run.")

        var rows: [[String]] = []
        var blockStarts: [Int: String] = [:]
        var blockNotes: [Int: [String]] = [:]
        for result in report.results {
            var title = "\(result.workload) \(result.name)"
            if let variant = result.variant { title += " (\(variant))" }
            title += " — \(result.durability), \(result.threads) thread\(result.threads == 1 ? "" : "s")"
            blockStarts[rows.count] = title
            for figure in result.figures {
                let unit = FigureUnit(rawValue: figure.unit) ?? .count
                let value = SampleStatistics(figure.samples).map { Format.summary($0, unit: unit) } ?? "–"
                if figure.comparisons.isEmpty {
                    rows.append([figure.name, value, "", "", ""])
                }
                for (offset, comparison) in figure.comparisons.enumerated() {
                    let baseline = SampleStatistics(comparison.samples).map { Format.summary($0, unit: unit) } ?? "–"
                    let ratio = SampleStatistics(comparison.ratios).map(Format.ratioSummary) ?? "–"
                    rows.append([offset == 0 ? figure.name : "", offset == 0 ? value : "", comparison.baseline, baseline, ratio])
                }
            }
            blockNotes[rows.count - 1, default: []] += result.notes
        }

        let header = ["FIGURE", "KACHE", "BASELINE", "BASELINE FIGURE", "RATIO"]
        let widths = (0..<header.count).map { column in ([header] + rows).map { $0[column].count }.max() ?? 0 }
        func line(_ cells: [String]) -> String {
            let padded = zip(cells, widths).map { cell, width in cell + String(repeating: " ", count: width - cell.count) }
            return ("  " + padded.joined(separator: "  ")).replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression)
        }
        for (index, row) in rows.enumerated() {
            if let title = blockStarts[index] {
                out.append("")
                out.append(title)
                out.append(line(header))
            }
            out.append(line(row))
            for note in blockNotes[index] ?? [] { out.append("  note: \(note)") }
        }

        if !report.targets.isEmpty {
            out.append("")
            out.append("Targets" + (options.quick ? " (set for the standard sizes; a quick run only hints at them)" : ""))
            let targetRows = report.targets.map { check -> [String] in
                let mode = check.durability.map { " [\($0)]" } ?? ""
                let margin = Format.significant(abs(check.margin) * 100, digits: 2) + " %"
                let context = check.context.map { "(\($0))" } ?? ""
                return [check.met ? "met   " : "MISSED", check.target + mode, check.measured, check.met ? "by \(margin)" : "short by \(margin)", context]
            }
            let targetWidths = (0..<5).map { column in targetRows.map { $0[column].count }.max() ?? 0 }
            for row in targetRows {
                let padded = zip(row, targetWidths).map { cell, width in cell + String(repeating: " ", count: width - cell.count) }
                out.append("  " + padded.joined(separator: "  ").replacingOccurrences(of: "\\s+$", with: "", options: .regularExpression))
            }
        }
        return out.joined(separator: "\n")
    }
}
