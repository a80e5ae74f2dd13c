/// A `Content-Range` field of a `206` response (RFC 9110 section 14.4):
/// `bytes 0-499/1234`, the part's offsets and the whole representation's length.
struct ContentRange: Equatable, Sendable {
    /// The offsets of the part.
    var range: Range<Int>
    /// The length of the complete representation; nil when the server sent `*`.
    var completeLength: Int?

    init(range: Range<Int>, completeLength: Int?) {
        self.range = range
        self.completeLength = completeLength
    }

    /// Parses `bytes first-last/complete`; nil for anything else (another unit,
    /// `bytes */1234` of a `416`, a last before the first or past the complete length).
    init?(_ field: String) {
        let trimmed = field.trimmingHTTPWhitespace
        guard let space = trimmed.firstIndex(of: " "), trimmed[..<space].lowercased() == "bytes" else { return nil }
        let spec = trimmed[trimmed.index(after: space)...].trimmingHTTPWhitespace
        let halves = spec.split(separator: "/", omittingEmptySubsequences: false)
        guard halves.count == 2 else { return nil }
        let bounds = halves[0].split(separator: "-", omittingEmptySubsequences: false)
        guard bounds.count == 2, let first = ContentRange.number(bounds[0]), let last = ContentRange.number(bounds[1]), last >= first
        else { return nil }
        if halves[1] == "*" {
            completeLength = nil
        } else {
            guard let length = ContentRange.number(halves[1]), last < length else { return nil }
            completeLength = length
        }
        range = first ..< last + 1
    }

    /// The field value: `bytes 10-19/100` (or `/*` without a complete length).
    var fieldValue: String {
        "bytes \(range.lowerBound)-\(range.upperBound - 1)/\(completeLength.map(String.init) ?? "*")"
    }

    private static func number(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (0x30 ... 0x39).contains($0) }) else { return nil }
        return Int(text)
    }
}
