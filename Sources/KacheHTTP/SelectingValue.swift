/// The value of a request field that a response's `Vary` names, in the form
/// two requests are compared in (RFC 9111 section 4.1): values that mean the
/// same select the same stored response.
///
/// ```
/// "text/html ,  application/json"      → "text/html, application/json"
/// "fr;q=0.8, EN-GB, de;q=0.8"          → "en-gb, de;q=0.8, fr;q=0.8"   (Accept-Language)
/// "br, gzip;q=0.5, identity;q=0, GZIP" → "br, gzip"                     (Accept-Encoding)
/// ```
enum SelectingValue {
    /// `value` (repeated fields already combined with commas) normalised for
    /// the field named `field`:
    ///
    /// - every field: members split at commas, whitespace around them and at
    ///   the ends removed, runs of whitespace inside made one space, empty members dropped;
    /// - `Accept-Language`: without case, as a set ordered by q-value (highest
    ///   first; equal q-values by tag), `q=1` left out;
    /// - `Accept-Encoding`: the set of codings accepted (q-value above 0), without case, sorted.
    static func normalized(_ value: String, field: String) -> String {
        let members = value.split(separator: ",").map { $0.split { $0 == " " || $0 == "\t" }.joined(separator: " ") }.filter { !$0.isEmpty }
        switch field.lowercased() {
        case "accept-language":
            return members.map { weighted($0.lowercased()) }
                .sorted { $0.quality != $1.quality ? $0.quality > $1.quality : $0.name < $1.name }
                .map { $0.quality == 1000 ? $0.name : "\($0.name);q=\(qText($0.quality))" }
                .joined(separator: ", ")
        case "accept-encoding":
            return Set(members.map { weighted($0.lowercased()) }.filter { $0.quality > 0 }.map(\.name)).sorted().joined(separator: ", ")
        default:
            return members.joined(separator: ", ")
        }
    }

    /// A member's name and its q-value in thousandths (1000 when absent or
    /// unreadable: the member counts as fully acceptable, as RFC 9110 section 12.4.2's default).
    private static func weighted(_ member: String) -> (name: String, quality: Int) {
        let parts = member.split(separator: ";").map { $0.trimmingHTTPWhitespace }
        let name = parts.first ?? ""
        var quality = 1000
        for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
            if let number = Double(parameter.dropFirst(2)), (0 ... 1).contains(number) {
                quality = Int((number * 1000).rounded())
            }
        }
        return (name, quality)
    }

    /// Thousandths as the shortest decimal: 500 → "0.5", 0 → "0".
    private static func qText(_ quality: Int) -> String {
        guard quality > 0 else { return "0" }
        var digits = String(quality + 1000).dropFirst()  // three digits, leading zeros kept
        while digits.last == "0" { digits = digits.dropLast() }
        return "0." + digits
    }
}
