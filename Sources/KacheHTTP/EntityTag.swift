/// An entity tag (RFC 9110 section 8.8.3): `"xyzzy"`, or weak, `W/"xyzzy"`.
struct EntityTag: Sendable, Equatable {
    /// Whether it is weak (`W/` before the quoted part).
    var isWeak: Bool
    /// The characters between the quotes.
    var opaque: Substring

    /// Parses one entity tag, whitespace around it allowed; nil when `text` is not one.
    init?(_ text: some StringProtocol) {
        var scanner = Substring(text.trimmingHTTPWhitespace)
        guard let tag = EntityTag.take(from: &scanner), scanner.isEmpty else { return nil }
        self = tag
    }

    private init(isWeak: Bool, opaque: Substring) {
        self.isWeak = isWeak
        self.opaque = opaque
    }

    /// The weak comparison (RFC 9110 section 8.8.3.2): the opaque parts are
    /// equal, whether either tag is weak or not.
    func weaklyMatches(_ other: EntityTag) -> Bool {
        opaque == other.opaque
    }

    /// What an `If-None-Match` field lists: any representation (`*`), or entity tags.
    enum List: Sendable, Equatable {
        case any
        case tags([EntityTag])

        /// Parses an `If-None-Match` (or `If-Match`) value: `*`, or entity tags
        /// separated by commas (a comma inside the quotes belongs to the tag).
        /// Nil when the value is neither, so that nothing is taken to match.
        init?(_ fieldValue: String) {
            if fieldValue.trimmingHTTPWhitespace == "*" {
                self = .any
                return
            }
            var scanner = Substring(fieldValue)
            var tags: [EntityTag] = []
            while true {
                scanner = scanner.drop { $0 == " " || $0 == "\t" || $0 == "," }
                if scanner.isEmpty { break }
                guard let tag = EntityTag.take(from: &scanner) else { return nil }
                tags.append(tag)
                scanner = scanner.drop { $0 == " " || $0 == "\t" }
                guard scanner.isEmpty || scanner.first == "," else { return nil }
            }
            guard !tags.isEmpty else { return nil }
            self = .tags(tags)
        }

        /// Whether `tag`, the current representation's, is in the list (weak
        /// comparison, as RFC 9110 section 13.1.2 requires for `If-None-Match`).
        func weaklyContains(_ tag: EntityTag?) -> Bool {
            switch self {
            case .any: return true
            case let .tags(tags): return tag.map { tag in tags.contains { $0.weaklyMatches(tag) } } ?? false
            }
        }
    }

    /// Takes an entity tag from the front of `scanner`, or nil (leaving it as it was).
    private static func take(from scanner: inout Substring) -> EntityTag? {
        var rest = scanner
        let isWeak = rest.hasPrefix("W/")
        if isWeak { rest = rest.dropFirst(2) }
        guard rest.first == "\"" else { return nil }
        rest = rest.dropFirst()
        guard let close = rest.firstIndex(of: "\"") else { return nil }
        let opaque = rest[..<close]
        // etagc: visible ASCII but the quote, and obs-text.
        guard opaque.unicodeScalars.allSatisfy({ $0.value == 0x21 || (0x23 ... 0x7E).contains($0.value) || $0.value >= 0x80 }) else { return nil }
        scanner = rest[rest.index(after: close)...]
        return EntityTag(isWeak: isWeak, opaque: opaque)
    }
}
