import Foundation

/// An SVG image built element by element, in drawing order, and rendered as
/// text. Attribute values and text are escaped, so any label (a baseline is
/// called `Mutex<[String: Data]>`) keeps the document well-formed XML.
///
/// The charts are written from Swift, not by a plotting library, so that
/// `kache-bench` stays one binary with no Python or other runtime to install,
/// and the chart tests run under `swift test` like the others; five kinds of
/// plain bar and line charts don't need more than this.
///
/// ```swift
/// var svg = SVGDocument(width: 200, height: 100)
/// svg.element("rect", ["x": "0", "y": "0", "width": "200", "height": "100", "fill": "white"])
/// svg.text("Hello", x: 100, y: 50, attributes: ["text-anchor": "middle"])
/// let xml = svg.rendered()
/// ```
struct SVGDocument {
    let width: Double
    let height: Double
    private var lines: [String] = []
    private var depth = 1

    init(width: Double, height: Double) {
        self.width = width
        self.height = height
    }

    /// Adds an empty element, e.g. `<line x1="0" … />`.
    mutating func element(_ name: String, _ attributes: KeyValuePairs<String, String>) {
        lines.append(indent + "<\(name)\(Self.attributeText(attributes))/>")
    }

    /// Adds an element with a `<title>` inside: the tooltip a browser shows
    /// over it, and the text a screen reader reads for it.
    mutating func element(_ name: String, _ attributes: KeyValuePairs<String, String>, title: String) {
        lines.append(indent + "<\(name)\(Self.attributeText(attributes))><title>\(Self.escape(title))</title></\(name)>")
    }

    /// Adds a `<title>` for the enclosing element (the document's own when at the top level).
    mutating func title(_ content: String) {
        lines.append(indent + "<title>\(Self.escape(content))</title>")
    }

    /// Adds a `<text>` element holding `content`.
    mutating func text(_ content: String, x: Double, y: Double, attributes: KeyValuePairs<String, String> = [:]) {
        let position = " x=\"\(Self.number(x))\" y=\"\(Self.number(y))\""
        lines.append(indent + "<text\(position)\(Self.attributeText(attributes))>\(Self.escape(content))</text>")
    }

    /// Opens a group; every element added until ``endGroup()`` belongs to it.
    mutating func beginGroup(_ attributes: KeyValuePairs<String, String>) {
        lines.append(indent + "<g\(Self.attributeText(attributes))>")
        depth += 1
    }

    mutating func endGroup() {
        precondition(depth > 1, "endGroup() without beginGroup()")
        depth -= 1
        lines.append(indent + "</g>")
    }

    /// The whole document, with its XML declaration, ready to be written to a `.svg` file.
    func rendered() -> String {
        precondition(depth == 1, "a group was left open")
        let size = "width=\"\(Self.number(width))\" height=\"\(Self.number(height))\" viewBox=\"0 0 \(Self.number(width)) \(Self.number(height))\""
        return """
            <?xml version="1.0" encoding="UTF-8"?>
            <svg xmlns="http://www.w3.org/2000/svg" \(size)>
            \(lines.joined(separator: "\n"))
            </svg>

            """
    }

    // MARK: - Text

    /// `text` with the five characters XML reserves replaced by their entities.
    static func escape(_ text: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": escaped += "&amp;"
            case "<": escaped += "&lt;"
            case ">": escaped += "&gt;"
            case "\"": escaped += "&quot;"
            case "'": escaped += "&apos;"
            default: escaped.append(character)
            }
        }
        return escaped
    }

    /// A coordinate with at most one decimal, the same in every locale: finer
    /// than a pixel is noise in the file.
    static func number(_ value: Double) -> String {
        let rounded = (value * 10).rounded() / 10
        return rounded == rounded.rounded() ? String(Int(rounded)) : String(format: "%.1f", rounded)
    }

    private var indent: String { String(repeating: "  ", count: depth) }

    private static func attributeText(_ attributes: KeyValuePairs<String, String>) -> String {
        attributes.map { " \($0.key)=\"\(escape($0.value))\"" }.joined()
    }
}
