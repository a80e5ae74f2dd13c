import Foundation

/// Draws a ``Chart`` as an SVG image: the title and subtitle, a legend, the
/// plot with its gridlines, tick labels and axis titles, and the footnotes.
///
/// Text is laid out with an estimate of its width (no font metrics are at
/// hand), generous enough for DejaVu Sans, the widest of the usual fonts, so
/// that nothing is clipped where a narrower font is used.
///
/// ```swift
/// let svg: String = ChartRenderer.render(chart)
/// ```
enum ChartRenderer {
    /// Fonts, from the one rsvg-convert finds on Debian to what a browser has.
    static let fontFamily = "DejaVu Sans, Verdana, Helvetica, Arial, sans-serif"

    private enum Layout {
        static let margin = 24.0
        static let plotHeight = 280.0
        static let titleSize = 19.0
        static let subtitleSize = 13.0
        static let legendSize = 12.5
        static let tickSize = 11.0
        static let valueSize = 10.0
        static let axisTitleSize = 12.5
        static let footnoteSize = 10.5
        static let grid = "#e3e6ea"
        static let ink = "#1f2328"
        static let muted = "#57606a"
    }

    static func render(_ chart: Chart) -> String {
        let width = chart.width
        let margin = Layout.margin
        let textWidth = width - 2 * margin
        let title = wrap(chart.title, fontSize: Layout.titleSize, width: textWidth, emWidth: 0.58)
        let subtitle = wrap(chart.subtitle, fontSize: Layout.subtitleSize, width: textWidth)
        let legendRows = legendLayout(chart, width: textWidth)
        let footnotes = chart.footnotes.flatMap { wrap($0, fontSize: Layout.footnoteSize, width: textWidth) }

        // From the top down: title, subtitle, legend, plot, x axis, footnotes.
        let titleBaseline = margin + 12
        let subtitleTop = titleBaseline + Double(title.count - 1) * 24 + 10
        let legendTop = subtitleTop + Double(subtitle.count) * 18 + 8
        let plotTop = legendTop + Double(legendRows.count) * 22 + 16
        let plotBottom = plotTop + Layout.plotHeight
        let xAxisDepth: Double = switch chart.plot {
        case .bars: 62
        case .lines: 46
        }
        let footnoteTop = plotBottom + xAxisDepth + 22
        let height = footnoteTop + Double(footnotes.count) * 14 + margin - 6

        let tickLabelWidth = chart.yAxis.ticks.map { estimatedWidth(chart.yAxis.style.tickLabel($0), fontSize: Layout.tickSize) }.max() ?? 0
        let plotLeft = margin + 22 + tickLabelWidth + 8
        let plotRight = width - margin
        let frame = PlotFrame(left: plotLeft, right: plotRight, top: plotTop, bottom: plotBottom, yAxis: chart.yAxis)

        var svg = SVGDocument(width: width, height: height.rounded(.up))
        svg.title(chart.title)
        svg.element("rect", ["x": "0", "y": "0", "width": "100%", "height": "100%", "fill": "#ffffff"])
        svg.beginGroup(["font-family": fontFamily, "fill": Layout.ink])

        for (index, line) in title.enumerated() {
            svg.text(line, x: margin, y: titleBaseline + Double(index) * 24, attributes: ["font-size": n(Layout.titleSize), "font-weight": "bold", "class": "chart-title"])
        }
        for (index, line) in subtitle.enumerated() {
            svg.text(line, x: margin, y: subtitleTop + 14 + Double(index) * 18, attributes: ["font-size": n(Layout.subtitleSize), "fill": Layout.muted, "class": "subtitle"])
        }
        drawLegend(chart, rows: legendRows, top: legendTop, into: &svg)
        drawYAxis(frame, into: &svg)
        switch chart.plot {
        case .bars(let bars): drawBars(bars, series: chart.series, frame: frame, into: &svg)
        case .lines(let lines): drawLines(lines, series: chart.series, frame: frame, into: &svg)
        }
        // The frame goes over the plot, so that bars end on the axis line.
        svg.element("line", ["x1": n(plotLeft), "y1": n(plotBottom), "x2": n(plotRight), "y2": n(plotBottom), "stroke": Layout.ink, "stroke-width": "1"])
        svg.element("line", ["x1": n(plotLeft), "y1": n(plotTop), "x2": n(plotLeft), "y2": n(plotBottom), "stroke": Layout.ink, "stroke-width": "1"])

        for (index, line) in footnotes.enumerated() {
            svg.text(line, x: margin, y: footnoteTop + Double(index) * 14, attributes: ["font-size": n(Layout.footnoteSize), "fill": Layout.muted, "class": "footnote"])
        }
        svg.endGroup()
        return svg.rendered()
    }

    // MARK: - Plot area

    /// The plot's rectangle and the y axis that maps values into it.
    private struct PlotFrame {
        var left: Double
        var right: Double
        var top: Double
        var bottom: Double
        var yAxis: ChartAxis

        var width: Double { right - left }

        /// The y coordinate of `value`, kept inside the plot.
        func y(_ value: Double) -> Double {
            let fraction = min(max(yAxis.fraction(of: value), 0), 1)
            return bottom - fraction * (bottom - top)
        }
    }

    private static func drawYAxis(_ frame: PlotFrame, into svg: inout SVGDocument) {
        let axis = frame.yAxis
        svg.beginGroup(["class": "y-axis"])
        for tick in axis.ticks {
            let y = frame.y(tick)
            svg.element("line", ["x1": n(frame.left), "y1": n(y), "x2": n(frame.right), "y2": n(y), "stroke": Layout.grid, "stroke-width": "1"])
            svg.text(axis.style.tickLabel(tick), x: frame.left - 7, y: y + 4, attributes: ["font-size": n(Layout.tickSize), "text-anchor": "end", "class": "tick"])
        }
        let middle = (frame.top + frame.bottom) / 2
        let x = Layout.margin + 6
        svg.text(axis.title, x: x, y: middle, attributes: [
            "font-size": n(Layout.axisTitleSize), "text-anchor": "middle", "transform": "rotate(-90 \(n(x)) \(n(middle)))", "class": "axis-title",
        ])
        svg.endGroup()
    }

    private static func drawBars(_ plot: Chart.BarPlot, series: [Chart.Series], frame: PlotFrame, into svg: inout SVGDocument) {
        let groupGap = 26.0
        let categoryCount = plot.groups.reduce(0) { $0 + $1.categories.count }
        let categoryWidth = (frame.width - groupGap * Double(plot.groups.count)) / Double(max(categoryCount, 1))
        let pitch = min(categoryWidth * 0.8 / Double(max(series.count, 1)), 90)
        // Wide slots (few bars) keep bars no wider than reads well, centred in the category.
        let barWidth = min(pitch * 0.86, 64)
        let inset = (categoryWidth - pitch * Double(series.count)) / 2
        let axisY = frame.bottom

        // Bars first, a group per series; then the labels, which may pass over a neighbour's bar.
        var labels: [(text: String, x: Double, y: Double)] = []
        var slots: [(group: Int, category: Chart.BarPlot.Category, left: Double)] = []
        var x = frame.left + groupGap / 2
        for (groupIndex, group) in plot.groups.enumerated() {
            for category in group.categories {
                slots.append((groupIndex, category, x))
                x += categoryWidth
            }
            x += groupGap
        }
        for (seriesIndex, one) in series.enumerated() {
            svg.beginGroup(["class": "series", "data-series": one.name])
            for slot in slots {
                guard seriesIndex < slot.category.values.count, let value = slot.category.values[seriesIndex] else { continue }
                let left = slot.left + inset + pitch * Double(seriesIndex) + (pitch - barWidth) / 2
                let top = frame.y(value.median)
                let center = left + barWidth / 2
                let description = "\(plot.groups[slot.group].label), \(slot.category.label): \(one.name) \(describe(value, style: frame.yAxis.style))"
                svg.element("rect", [
                    "x": n(left), "y": n(top), "width": n(barWidth), "height": n(max(axisY - top, 0.5)), "fill": one.color, "class": "bar",
                ], title: description)
                if value.min != value.max { drawWhisker(value, x: center, capWidth: barWidth * 0.45, frame: frame, into: &svg) }
                labels.append((frame.yAxis.style.format(value.median), center, frame.y(value.max) - 5))
            }
            svg.endGroup()
        }
        let labelsFit = labels.allSatisfy { estimatedWidth($0.text, fontSize: Layout.valueSize) <= pitch + 4 }
        svg.beginGroup(["class": "value-labels", "font-size": n(Layout.valueSize), "text-anchor": labelsFit ? "middle" : "start"])
        for label in labels {
            if labelsFit {
                svg.text(label.text, x: label.x, y: label.y)
            } else {
                // Too narrow side by side: read upwards from the top of the bar.
                svg.text(label.text, x: label.x + 3.5, y: label.y, attributes: ["transform": "rotate(-90 \(n(label.x + 3.5)) \(n(label.y)))"])
            }
        }
        svg.endGroup()

        svg.beginGroup(["class": "x-axis"])
        for (groupIndex, group) in plot.groups.enumerated() {
            let members = slots.filter { $0.group == groupIndex }
            guard let first = members.first, let last = members.last else { continue }
            for member in members {
                svg.text(member.category.label, x: member.left + categoryWidth / 2, y: axisY + 17, attributes: [
                    "font-size": n(Layout.tickSize), "text-anchor": "middle", "class": "tick",
                ])
            }
            let middle = (first.left + last.left + categoryWidth) / 2
            svg.text(group.label, x: middle, y: axisY + 35, attributes: [
                "font-size": n(Layout.axisTitleSize), "font-weight": "bold", "text-anchor": "middle", "class": "group-label",
            ])
            if groupIndex > 0 {
                let between = first.left - groupGap / 2
                svg.element("line", ["x1": n(between), "y1": n(frame.top), "x2": n(between), "y2": n(axisY + 40), "stroke": Layout.grid, "stroke-width": "1"])
            }
        }
        svg.text(plot.categoryTitle, x: (frame.left + frame.right) / 2, y: axisY + 56, attributes: [
            "font-size": n(Layout.axisTitleSize), "text-anchor": "middle", "fill": Layout.muted, "class": "axis-title",
        ])
        svg.endGroup()
    }

    private static func drawLines(_ plot: Chart.LinePlot, series: [Chart.Series], frame: PlotFrame, into svg: inout SVGDocument) {
        let xAxis = plot.xAxis
        func x(_ value: Double) -> Double { frame.left + min(max(xAxis.fraction(of: value), 0), 1) * frame.width }

        svg.beginGroup(["class": "x-axis"])
        for tick in xAxis.ticks {
            svg.element("line", ["x1": n(x(tick)), "y1": n(frame.top), "x2": n(x(tick)), "y2": n(frame.bottom), "stroke": Layout.grid, "stroke-width": "1"])
            svg.text(xAxis.style.tickLabel(tick), x: x(tick), y: frame.bottom + 18, attributes: ["font-size": n(Layout.tickSize), "text-anchor": "middle", "class": "tick"])
        }
        svg.text(xAxis.title, x: (frame.left + frame.right) / 2, y: frame.bottom + 40, attributes: [
            "font-size": n(Layout.axisTitleSize), "text-anchor": "middle", "class": "axis-title",
        ])
        svg.endGroup()

        // At each x, the highest series is labelled above its point and the others below theirs.
        var highest: [Double: Double] = [:]
        for points in plot.points {
            for point in points { highest[point.x] = max(highest[point.x] ?? -.infinity, point.value.median) }
        }
        for (seriesIndex, one) in series.enumerated() where seriesIndex < plot.points.count {
            let points = plot.points[seriesIndex]
            svg.beginGroup(["class": "series", "data-series": one.name])
            let path = points.map { "\(n(x($0.x))),\(n(frame.y($0.value.median)))" }.joined(separator: " ")
            svg.element("polyline", ["points": path, "fill": "none", "stroke": one.color, "stroke-width": "2.5", "stroke-linejoin": "round"])
            for point in points {
                let px = x(point.x)
                if point.value.min != point.value.max { drawWhisker(point.value, x: px, capWidth: 9, frame: frame, into: &svg) }
                let description = "\(xAxis.title) \(xAxis.style.format(point.x)): \(one.name) \(describe(point.value, style: frame.yAxis.style))"
                svg.element("circle", ["cx": n(px), "cy": n(frame.y(point.value.median)), "r": "4.5", "fill": one.color, "stroke": "#ffffff", "stroke-width": "1.5", "class": "point"], title: description)
                let above = point.value.median >= (highest[point.x] ?? 0)
                let labelY = above ? frame.y(point.value.max) - 9 : frame.y(point.value.min) + 18
                svg.text(frame.yAxis.style.format(point.value.median), x: px, y: labelY, attributes: [
                    "font-size": n(Layout.valueSize + 1), "text-anchor": "middle", "font-weight": "bold", "fill": one.color, "class": "value-label",
                ])
            }
            svg.endGroup()
        }
    }

    /// A vertical line from the smallest to the largest run, with caps.
    private static func drawWhisker(_ value: Chart.Value, x: Double, capWidth: Double, frame: PlotFrame, into svg: inout SVGDocument) {
        let low = frame.y(value.min)
        let high = frame.y(value.max)
        svg.element("line", ["x1": n(x), "y1": n(low), "x2": n(x), "y2": n(high), "stroke": Layout.ink, "stroke-width": "1.2", "class": "whisker"])
        for y in [low, high] {
            svg.element("line", ["x1": n(x - capWidth / 2), "y1": n(y), "x2": n(x + capWidth / 2), "y2": n(y), "stroke": Layout.ink, "stroke-width": "1.2"])
        }
    }

    // MARK: - Legend

    private struct LegendItem {
        var series: Int
        var x: Double
    }

    /// The legend's items, row by row, each with its offset from the left margin.
    private static func legendLayout(_ chart: Chart, width: Double) -> [[LegendItem]] {
        var rows: [[LegendItem]] = [[]]
        var x = 0.0
        for (index, one) in chart.series.enumerated() {
            let itemWidth = 18 + estimatedWidth(one.name, fontSize: Layout.legendSize) + 22
            if x > 0, x + itemWidth > width {
                rows.append([])
                x = 0
            }
            rows[rows.count - 1].append(LegendItem(series: index, x: x))
            x += itemWidth
        }
        return rows
    }

    private static func drawLegend(_ chart: Chart, rows: [[LegendItem]], top: Double, into svg: inout SVGDocument) {
        svg.beginGroup(["class": "legend", "font-size": n(Layout.legendSize)])
        for (rowIndex, row) in rows.enumerated() {
            let middle = top + Double(rowIndex) * 22 + 11
            for item in row {
                let one = chart.series[item.series]
                let left = Layout.margin + item.x
                switch chart.plot {
                case .bars:
                    svg.element("rect", ["x": n(left), "y": n(middle - 6), "width": "12", "height": "12", "fill": one.color])
                case .lines:
                    svg.element("line", ["x1": n(left - 2), "y1": n(middle), "x2": n(left + 14), "y2": n(middle), "stroke": one.color, "stroke-width": "2.5"])
                    svg.element("circle", ["cx": n(left + 6), "cy": n(middle), "r": "4", "fill": one.color])
                }
                svg.text(one.name, x: left + 18, y: middle + 4.5, attributes: ["class": "legend-entry"])
            }
        }
        svg.endGroup()
    }

    // MARK: - Text

    /// "0.889 µs (0.828–0.989)": the median, and the range when the runs differed.
    private static func describe(_ value: Chart.Value, style: ChartValueStyle) -> String {
        let median = style.format(value.median)
        return value.min == value.max ? median : "\(median) (\(style.format(value.min))–\(style.format(value.max)))"
    }

    /// About how wide `text` is at `fontSize`, in pixels: DejaVu Sans averages
    /// some 0.56 em a character over mixed text (bold, some 0.58); digits and capitals run wider.
    static func estimatedWidth(_ text: String, fontSize: Double, emWidth: Double = 0.56) -> Double {
        Double(text.count) * fontSize * emWidth
    }

    /// `text` broken at spaces into lines no wider than `width`.
    static func wrap(_ text: String, fontSize: Double, width: Double, emWidth: Double = 0.56) -> [String] {
        var lines: [String] = []
        var line = ""
        for word in text.split(separator: " ", omittingEmptySubsequences: true) {
            let candidate = line.isEmpty ? String(word) : line + " " + word
            if !line.isEmpty, estimatedWidth(candidate, fontSize: fontSize, emWidth: emWidth) > width {
                lines.append(line)
                line = String(word)
            } else {
                line = candidate
            }
        }
        if !line.isEmpty { lines.append(line) }
        return lines
    }

    private static func n(_ value: Double) -> String { SVGDocument.number(value) }
}
