import Foundation
import Testing
@testable import KacheBench

/// The SVG writer, the axes and the renderer, on charts made up for the test.
@Suite("chart drawing")
struct ChartDrawingTests {
    @Test func labelsWithMarkupCharactersKeepTheDocumentWellFormed() throws {
        let hostile = #"Mutex<[String: Data]> & "quotes" 'too'"#
        let chart = Chart(
            fileName: "test.svg", title: hostile, subtitle: "a <b>subtitle</b> & more",
            series: [Chart.Series(name: hostile, color: "#000000")],
            plot: .bars(Chart.BarPlot(groups: [.init(label: "<group>", categories: [.init(label: "a&b", values: [Chart.Value(median: 2, min: 1, max: 3)])])],
                                      categoryTitle: "x < y")),
            yAxis: .linear(title: "y & z", covering: [1, 3], style: .plain),
            footnotes: ["made by <test>"]
        )
        let svg = SVGOutline(Data(ChartRenderer.render(chart).utf8))
        #expect(svg.parseError == nil)
        #expect(svg.seriesNames == [hostile])
        #expect(svg.texts(ofClass: "legend-entry") == [hostile])
        #expect(svg.texts(ofClass: "group-label") == ["<group>"])
        #expect(svg.tooltips(of: hostile) == ["<group>, a&b: \(hostile) 2.00 (1.00–3.00)"])
    }

    @Test func numbersAreWrittenWithAPointAndAtMostOneDecimal() {
        #expect(SVGDocument.number(12) == "12")
        #expect(SVGDocument.number(12.345) == "12.3")
        #expect(SVGDocument.number(-0.04) == "0")
        #expect(SVGDocument.escape("a<b&c>\"d'") == "a&lt;b&amp;c&gt;&quot;d&apos;")
    }

    @Test func logarithmicAxisPlacesEachDecadeAnEqualStepApart() {
        let axis = ChartAxis.logarithmic(title: "capacity", covering: [1_000, 100_000], style: .count)
        let steps = [1_000.0, 10_000, 100_000].map(axis.fraction(of:))
        #expect(abs((steps[1] - steps[0]) - (steps[2] - steps[1])) < 1e-9)
        #expect(steps[0] > 0 && steps[2] < 1, "the points keep off the frame")
        #expect([1_000.0, 10_000, 100_000].allSatisfy(axis.ticks.contains))
        #expect(axis.ticks == axis.ticks.sorted() && axis.ticks.allSatisfy { $0 >= axis.lower && $0 <= axis.upper })
    }

    @Test func narrowLogarithmicRangesGetTicksAtTwoAndFiveToo() {
        let axis = ChartAxis.logarithmic(title: "sets/s", covering: [30_000, 400_000], style: .rate)
        #expect(axis.ticks.contains(50_000) && axis.ticks.contains(200_000) && axis.ticks.contains(100_000))
        let bytes = ChartAxis.logarithmic(title: "bytes", covering: [260, 270_000], style: .bytes, tickBase: 4)
        #expect(bytes.ticks.map(bytes.style.tickLabel) == ["256 B", "1 KiB", "4 KiB", "16 KiB", "64 KiB", "256 KiB"])
    }

    @Test func linearAxisStartsAtZeroAndRoomsTheLargestValue() {
        let axis = ChartAxis.linear(title: "ops/s", covering: [1.08e6, 2.11e6, 2.62e6], style: .rate)
        #expect(axis.lower == 0 && axis.upper >= 2.62e6 * 1.1)
        #expect(axis.ticks.first == 0 && axis.ticks.last == axis.upper)
        #expect(axis.ticks.map(axis.style.tickLabel) == ["0", "500 k", "1 M", "1.5 M", "2 M", "2.5 M", "3 M", "3.5 M"])
    }

    @Test func longTextIsWrappedAtSpacesWithinTheWidth() {
        let words = Array(repeating: "word", count: 60).joined(separator: " ")
        let lines = ChartRenderer.wrap(words, fontSize: 13, width: 300)
        #expect(lines.count > 1)
        #expect(lines.allSatisfy { ChartRenderer.estimatedWidth($0, fontSize: 13) <= 300 })
        #expect(lines.joined(separator: " ") == words)
    }
}
