/// The value of a request field that a response's `Vary` names, in the form
/// two requests are compared in (RFC 9111 section 4.1): values that mean the
/// same select the same stored response.
///
/// ```
/// "text/html ,  application/json"        → "text/html, application/json"
/// "fr;q=0.8, EN-GB, de ; Q=0.80"         → "en-gb, de;q=0.8, fr;q=0.8"   (Accept-Language)
/// "gzip;q=1.0, br;q=0.500"               → "gzip, br;q=0.5"               (Accept-Encoding)
/// ```
///
/// Every rewrite is one RFC 9111 section 4.1 allows because the field's
/// specification makes the two forms mean the same; nothing is merged on a
/// guess of what the server will choose. Members of equal weight are
/// equally acceptable by RFC 9110 section 12.4.2, so they are put in name
/// order: `en, de` and `de, en` select one response, as the conformance
/// suite's `vary-normalise-lang-order` expects (RFC 9110 section 12.5.4 notes
/// that some servers prefer the first of equal weights; a server that does
/// should give them different weights, or `Vary` with no normalisation is
/// what it needs, which no field offers).
enum SelectingValue {
    /// `value` (repeated fields already combined with commas) normalised for
    /// the field named `field`:
    ///
    /// - every field: members split at commas, whitespace around them and at
    ///   the ends removed, runs of whitespace inside made one space, empty
    ///   members dropped; inside a quoted string, nothing changes;
    /// - `Accept`, `Accept-Language`, `Accept-Encoding`, when every member is
    ///   well-formed (``weightedMembers(_:field:)``): names without case (for
    ///   `Accept`, the type, subtype and parameter names), no whitespace
    ///   around `;`, the weight written the shortest way (`q=0.80` is `q=0.8`,
    ///   `q=1.000` is no weight), and the members in descending weight, members
    ///   of equal weight by name. When a name appears twice,
    ///   the order is kept as it is (servers differ on which of the two counts).
    static func normalized(_ value: String, field: String) -> String {
        let members = listMembers(value)
        guard let weighted = weightedMembers(members, field: field.lowercased()) else { return members.joined(separator: ", ") }
        let distinct = Set(weighted.map(\.name)).count == weighted.count
        let ordered = distinct
            ? weighted.sorted { $0.quality != $1.quality ? $0.quality > $1.quality : $0.name < $1.name }
            : weighted
        return ordered.map { $0.quality == 1000 ? $0.name : "\($0.name);q=\(qText($0.quality))" }.joined(separator: ", ")
    }

    /// The members of a list field value: split at the commas outside quoted
    /// strings, trimmed, with each run of spaces and tabs outside quoted strings
    /// made one space; empty members are left out (RFC 9110 section 5.6.1).
    static func listMembers(_ value: String) -> [String] {
        var members: [String] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        var pendingSpace = false
        for character in value {
            if inQuotes {
                current.append(character)
                if escaped { escaped = false } else if character == "\\" { escaped = true } else if character == "\"" { inQuotes = false }
                continue
            }
            switch character {
            case ",":
                members.append(current)
                current = ""
                pendingSpace = false
            case " ", "\t":
                pendingSpace = !current.isEmpty
            default:
                if pendingSpace { current.append(" ") }
                pendingSpace = false
                current.append(character)
                if character == "\"" { inQuotes = true }
            }
        }
        members.append(current)
        return members.filter { !$0.isEmpty }
    }

    /// A list member with its weight: `name` in its normal form (for `Accept`,
    /// the media range with its parameters), `quality` in thousandths.
    struct WeightedMember: Equatable {
        var name: String
        var quality: Int
    }

    /// The members of a weighted list field (`accept`, `accept-language`,
    /// `accept-encoding`), or nil for another field or when any member is not
    /// well-formed by RFC 9110 section 12.4.2 and the field's grammar (an
    /// invalid or misplaced weight, a quoted string, a parameter where none
    /// may be): its meaning is then unknown, and only whitespace is normalised.
    static func weightedMembers(_ members: [String], field: String) -> [WeightedMember]? {
        guard ["accept", "accept-language", "accept-encoding"].contains(field) else { return nil }
        var result: [WeightedMember] = []
        for member in members {
            // A quoted string may hold a comma or a semicolon: the split above can't be trusted.
            guard !member.contains("\"") else { return nil }
            let parts = member.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingHTTPWhitespace }
            guard let name = parts.first, !name.isEmpty, !name.contains(" ") else { return nil }
            var parameters: [String] = []
            var quality = 1000
            for (position, parameter) in parts.dropFirst().enumerated() {
                guard let equals = parameter.firstIndex(of: "="), equals != parameter.startIndex else { return nil }
                let key = parameter[..<equals].lowercased()
                let text = parameter[parameter.index(after: equals)...]
                if key == "q" {
                    // The weight comes last (RFC 9110 section 12.4.2): anything after it is outside the grammar.
                    guard position == parts.count - 2, let weight = qValue(text) else { return nil }
                    quality = weight
                } else {
                    // Only a media range has parameters; their values keep their case (some are case-sensitive).
                    guard field == "accept", !key.contains(" "), !text.isEmpty, !text.contains(" ") else { return nil }
                    parameters.append("\(key)=\(text)")
                }
            }
            if field == "accept" { guard name.contains("/") else { return nil } }
            result.append(WeightedMember(name: ([name.lowercased()] + parameters).joined(separator: ";"), quality: quality))
        }
        return result
    }

    /// A qvalue (RFC 9110 section 12.4.2) in thousandths, by its exact grammar
    /// `( "0" [ "." 0*3DIGIT ] ) / ( "1" [ "." 0*3("0") ] )`; nil otherwise.
    static func qValue(_ text: Substring) -> Int? {
        let characters = Array(text.utf8)
        guard let first = characters.first, first == UInt8(ascii: "0") || first == UInt8(ascii: "1") else { return nil }
        guard characters.count > 1 else { return first == UInt8(ascii: "1") ? 1000 : 0 }
        let fraction = characters.dropFirst(2)
        guard characters[1] == UInt8(ascii: "."), fraction.count <= 3,
              fraction.allSatisfy({ (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains($0) })
        else { return nil }
        var thousandths = 0
        for (index, digit) in fraction.enumerated() {
            thousandths += Int(digit - UInt8(ascii: "0")) * [100, 10, 1][index]
        }
        if first == UInt8(ascii: "1") { return thousandths == 0 ? 1000 : nil }
        return thousandths
    }

    // MARK: - Selecting by Content-Language

    /// The language a request's `Accept-Language` selects for certain,
    /// lowercased: its one range of the highest weight, when that weight is
    /// over 0 and the range names a language (not `*`). Nil when the field is
    /// missing or malformed, when two ranges share the highest weight (the
    /// server may pick either), when a range is named twice, or when every
    /// weight is 0.
    ///
    /// ```
    /// "fr;q=0.5, de;q=1.0"  → "de"
    /// "en, de"              → nil   (a tie)
    /// "*, de;q=0.5"         → nil   (any language first)
    /// "de;q=0"              → nil
    /// ```
    static func selectedLanguage(acceptLanguage value: String?) -> String? {
        guard let value, let members = weightedMembers(listMembers(value), field: "accept-language"),
              Set(members.map(\.name)).count == members.count,
              let top = members.max(by: { $0.quality < $1.quality }), top.quality > 0,
              members.filter({ $0.quality == top.quality }).count == 1,
              isLanguageTag(top.name)
        else { return nil }
        return top.name
    }

    /// The one language tag of a `Content-Language` value, lowercased; nil
    /// when there is none, several (a text for several audiences), or one that
    /// is not a language tag.
    static func contentLanguage(_ value: String?) -> String? {
        guard let value else { return nil }
        let members = listMembers(value)
        guard members.count == 1, isLanguageTag(members[0]) else { return nil }
        return members[0].lowercased()
    }

    /// Whether `text` is a language tag as `Accept-Language` and
    /// `Content-Language` write them (RFC 4647 section 2.1, RFC 5646): subtags
    /// of 1 to 8 letters or digits joined by `-`, the first of letters only.
    private static func isLanguageTag(_ text: String) -> Bool {
        let subtags = text.split(separator: "-", omittingEmptySubsequences: false)
        return subtags.enumerated().allSatisfy { position, subtag in
            (1 ... 8).contains(subtag.utf8.count)
                && subtag.unicodeScalars.allSatisfy { $0.isASCII && ($0.properties.isAlphabetic || (position > 0 && ("0" ... "9").contains($0))) }
        }
    }

    /// Thousandths as the shortest decimal: 500 → "0.5", 0 → "0".
    private static func qText(_ quality: Int) -> String {
        guard quality > 0 else { return "0" }
        var digits = String(quality + 1000).dropFirst()  // three digits, leading zeros kept
        while digits.last == "0" { digits = digits.dropLast() }
        return "0." + digits
    }
}
