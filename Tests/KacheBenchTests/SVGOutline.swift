import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// An SVG file read back with Foundation's XML parser: whether it is
/// well-formed, and the elements the chart tests look for.
final class SVGOutline: NSObject, XMLParserDelegate {
    struct Element {
        var name: String
        var attributes: [String: String]
        /// The text inside it (a `<text>`'s label, a `<title>`'s tooltip).
        var text: String
        /// The `data-series` of the series group it is drawn in, if any.
        var series: String?
    }

    private(set) var elements: [Element] = []
    private(set) var parseError: Error?
    private var open: [Int] = []

    /// Parses `data`; ``parseError`` says whether it was well-formed.
    init(_ data: Data) {
        super.init()
        let parser = XMLParser(data: data)
        parser.delegate = self
        if !parser.parse() { parseError = parser.parserError ?? CocoaError(.fileReadCorruptFile) }
    }

    /// The root element's name ("svg" for an SVG file).
    var root: String? { elements.first?.name }

    /// The text of every element of `class`, in document order.
    func texts(ofClass name: String) -> [String] {
        elements.filter { $0.attributes["class"] == name }.map(\.text)
    }

    /// The series groups' names, in drawing order.
    var seriesNames: [String] {
        elements.filter { $0.name == "g" && $0.attributes["class"] == "series" }.compactMap { $0.attributes["data-series"] }
    }

    /// The marks (bars or points) drawn for `series`.
    func marks(of series: String) -> [Element] {
        elements.filter { $0.series == series && ($0.attributes["class"] == "bar" || $0.attributes["class"] == "point") }
    }

    /// The tooltip of each mark of `series`.
    func tooltips(of series: String) -> [String] {
        let indices = elements.indices.filter { elements[$0].series == series && ["bar", "point"].contains(elements[$0].attributes["class"]) }
        return indices.compactMap { index in elements[(index + 1)...].first { $0.name == "title" }?.text }
    }

    // MARK: - XMLParserDelegate

    func parser(_ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?, attributes: [String: String] = [:]) {
        let enclosing = open.last.map { elements[$0] }
        var series = enclosing?.series
        if elementName == "g", attributes["class"] == "series" { series = attributes["data-series"] }
        elements.append(Element(name: elementName, attributes: attributes, text: "", series: series))
        open.append(elements.count - 1)
    }

    func parser(_ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?) {
        open.removeLast()
    }

    func parser(_ parser: XMLParser, foundCharacters string: String) {
        if let index = open.last { elements[index].text += string }
    }
}
