/// Rows of text in aligned columns: text to the left, numbers to the right.
struct TextTable {
    enum Alignment {
        case left, right
    }

    struct Column {
        var title: String
        var alignment: Alignment
    }

    var columns: [Column]
    var rows: [[String]] = []

    /// A table with these column titles; a title that starts with `>` is right-aligned.
    init(_ titles: String...) {
        columns = titles.map { title in
            title.hasPrefix(">") ? Column(title: String(title.dropFirst()), alignment: .right) : Column(title: title, alignment: .left)
        }
    }

    mutating func append(_ cells: String...) {
        precondition(cells.count == columns.count, "a row has \(cells.count) cells; the table has \(columns.count) columns")
        rows.append(cells)
    }

    /// The table, a heading row first, each line indented by `indent` spaces, with no trailing spaces.
    func rendered(indent: Int = 2) -> String {
        let widths = columns.indices.map { column in
            ([columns[column].title] + rows.map { $0[column] }).map(\.count).max() ?? 0
        }
        let margin = String(repeating: " ", count: indent)
        return ([columns.map(\.title)] + rows).map { cells in
            let padded = cells.indices.map { column -> String in
                let gap = String(repeating: " ", count: widths[column] - cells[column].count)
                return columns[column].alignment == .right ? gap + cells[column] : cells[column] + gap
            }
            let line = margin + padded.joined(separator: "  ")
            return String(line.reversed().drop(while: { $0 == " " }).reversed())
        }.joined(separator: "\n")
    }
}
