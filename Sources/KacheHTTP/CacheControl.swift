import Foundation
import RawStructuredFieldValues
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The directives of a `Cache-Control` header field (RFC 9111 section 5.2),
/// parsed from a request or a response, or of a targeted field such as
/// `CDN-Cache-Control` (RFC 9213).
///
/// These are the directives as stated; ``CachePolicy/responseDirectives(_:)``
/// gives the view a cache of the policy's role acts on (for a shared cache,
/// `s-maxage` in place of `max-age`).
///
/// `Cache-Control` is not a structured field (RFC 8941): it predates that
/// syntax, and real servers send values a structured parser rejects (`max-age="60"`,
/// uppercase names, `private="a, b"`), so it is parsed by hand here. Directive
/// names are case-insensitive; values may be tokens or quoted strings (which
/// may contain commas). When a directive appears twice, the first occurrence
/// counts (RFC 9111 section 4.2.1). Targeted fields *are* structured
/// dictionaries (RFC 9213 section 2.1), see ``init(targetedField:)``.
struct CacheControl: Sendable, Equatable {
    /// `max-age=N`: fresh for N seconds (response), or no older than N seconds (request).
    /// A value that is not a number reads as 0, so the response is stale
    /// (RFC 9111 section 4.2.1 encourages exactly that).
    var maxAge: Int?
    /// `s-maxage=N`: for a shared cache, replaces `max-age` and `Expires` and
    /// implies `proxy-revalidate` (RFC 9111 section 5.2.2.10); a private cache ignores it.
    var sharedMaxAge: Int?
    /// `proxy-revalidate`: `must-revalidate` for shared caches only (RFC 9111 section 5.2.2.8).
    var proxyRevalidate = false
    /// `no-store`: never store the response (or, on a request, neither use nor store one).
    var noStore = false
    /// `must-understand` (RFC 9111 section 5.2.2.3): store the response only
    /// if its status code's caching rules are understood; when they are, the
    /// response's `no-store` is ignored (a server sends both, for caches that
    /// predate the directive).
    var mustUnderstand = false
    /// `no-cache`: a stored response must be revalidated before each use. The
    /// field-qualified form (`no-cache="Set-Cookie"`) is treated as unqualified.
    var noCache = false
    /// `must-revalidate`: once stale, the response must not be used without
    /// revalidation, not even when the server can't be reached.
    var mustRevalidate = false
    /// `private`: only a private cache may store the response.
    var isPrivate = false
    /// The field names of a qualified `private="Set-Cookie, X-User"`
    /// (lowercased), or nil for plain `private`: a shared cache may store the
    /// response without those fields (RFC 9111 section 5.2.2.7).
    var privateFields: [String]?
    /// `public`: any cache may store the response.
    var isPublic = false
    /// `stale-if-error=N` (RFC 5861): the response may be used for N seconds
    /// after it becomes stale when the server can't be reached or answers with an error.
    var staleIfError: Int?
    /// `stale-while-revalidate=N` (RFC 5861): for N seconds after it becomes
    /// stale, the response may be used at once while it is revalidated in the background.
    var staleWhileRevalidate: Int?
    /// `immutable` (RFC 8246): while fresh, the response will not change, so a
    /// reload (a request's `max-age=0`) need not revalidate it. Once stale, it is
    /// revalidated like any other.
    var immutable = false
    /// A request's `max-stale[=N]`: a stale response is acceptable when stale for
    /// at most N seconds (without N, however long; saturated at 2^31).
    var maxStale: Int?
    /// A request's `min-fresh=N`: the response must stay fresh for at least N more seconds.
    var minFresh: Int?
    /// A request's `only-if-cached`: answer from the cache or with a `504`, never the network.
    var onlyIfCached = false
    /// Whether these directives come from a targeted field (RFC 9213) rather
    /// than `Cache-Control`: the response's `Expires` is then ignored too.
    var isTargeted = false

    /// The largest delta-seconds value; larger ones saturate (RFC 9111 section 1.2.2).
    static let deltaSecondsLimit = 2_147_483_648

    /// A request's directives: its `Cache-Control`, or without one, `Pragma:
    /// no-cache` read as `Cache-Control: no-cache` (RFC 9111 section 5.4).
    init(request: URLRequest) {
        self.init(request.value(forHTTPHeaderField: "Cache-Control"))
        if request.value(forHTTPHeaderField: "Cache-Control") == nil,
           let pragma = request.value(forHTTPHeaderField: "Pragma"),
           pragma.split(separator: ",").contains(where: { $0.trimmingHTTPWhitespace.lowercased() == "no-cache" }) {
            noCache = true
        }
    }

    /// Parses a `Cache-Control` field value; nil or empty yields no directives.
    init(_ fieldValue: String?) {
        var seen = Set<String>()
        for (name, value) in CacheControl.directives(in: fieldValue ?? "") {
            guard seen.insert(name).inserted else { continue }
            switch name {
            case "max-age": maxAge = CacheControl.deltaSeconds(value) ?? 0
            case "s-maxage": sharedMaxAge = CacheControl.deltaSeconds(value) ?? 0
            case "proxy-revalidate": proxyRevalidate = true
            case "no-store": noStore = true
            case "must-understand": mustUnderstand = true
            case "no-cache": noCache = true
            case "must-revalidate": mustRevalidate = true
            case "private":
                isPrivate = true
                privateFields = CacheControl.fieldNames(value)
            case "public": isPublic = true
            case "stale-if-error": staleIfError = CacheControl.deltaSeconds(value)
            case "stale-while-revalidate": staleWhileRevalidate = CacheControl.deltaSeconds(value)
            case "immutable": immutable = true
            case "max-stale": maxStale = value == nil ? CacheControl.deltaSecondsLimit : CacheControl.deltaSeconds(value) ?? 0
            case "min-fresh": minFresh = CacheControl.deltaSeconds(value) ?? 0
            case "only-if-cached": onlyIfCached = true
            default: break
            }
        }
    }

    /// Parses a targeted field value (such as `CDN-Cache-Control`) as an RFC
    /// 8941 dictionary, as RFC 9213 section 2.1 requires; nil when it is not
    /// a valid dictionary or is empty, so that the field is ignored.
    ///
    /// A delta-seconds directive takes an integer (`max-age=60`, saturated at
    /// 2^31), a flag takes a boolean (`private`, `no-store`; `?0` means absent),
    /// and `private` may also carry a string of field names. A directive whose
    /// value has another type (`max-age="60"`, `max-age=-1`) is ignored; the
    /// others still count. Parameters are ignored.
    init?(targetedField fieldValue: String) {
        var parser = StructuredFieldValueParser(Array(fieldValue.utf8))
        guard let dictionary = try? parser.parseDictionaryFieldValue(), dictionary.count > 0 else { return nil }
        isTargeted = true
        for (name, member) in dictionary {
            guard case let .item(item) = member else { continue }
            // rfc9651BareItem, not the deprecated bareItem, which traps on a date or a display string.
            let bare = item.rfc9651BareItem
            let seconds: Int? = if case let .integer(value) = bare, value >= 0 { Int(min(value, Int64(CacheControl.deltaSecondsLimit))) } else { nil }
            let flag: Bool = if case .bool(true) = bare { true } else { false }
            switch name {
            case "max-age": maxAge = seconds
            case "s-maxage": sharedMaxAge = seconds
            case "stale-if-error": staleIfError = seconds
            case "stale-while-revalidate": staleWhileRevalidate = seconds
            case "no-store": noStore = flag
            case "must-understand": mustUnderstand = flag
            case "no-cache":
                // The qualified form counts as plain no-cache, as in Cache-Control.
                if case .string = bare { noCache = true } else { noCache = flag }
            case "must-revalidate": mustRevalidate = flag
            case "proxy-revalidate": proxyRevalidate = flag
            case "public": isPublic = flag
            case "immutable": immutable = flag
            case "private":
                if case let .string(names) = bare {
                    isPrivate = true
                    privateFields = CacheControl.fieldNames(names)
                } else {
                    isPrivate = flag
                }
            default: break
            }
        }
    }

    /// The field names listed in a directive's value, lowercased; nil for no
    /// value or an empty list (which then counts as the unqualified directive).
    private static func fieldNames(_ value: String?) -> [String]? {
        let names = (value ?? "").split(separator: ",").map { $0.trimmingHTTPWhitespace.lowercased() }.filter { !$0.isEmpty }
        return names.isEmpty ? nil : names
    }

    /// A delta-seconds value: ASCII digits only, saturated at 2^31; nil otherwise.
    static func deltaSeconds(_ text: String?) -> Int? {
        guard let text, !text.isEmpty, text.utf8.allSatisfy({ (0x30 ... 0x39).contains($0) }) else { return nil }
        let significant = text.drop { $0 == "0" }
        guard significant.count <= 10 else { return deltaSecondsLimit }
        return min(Int(significant) ?? 0, deltaSecondsLimit)
    }

    /// Splits a field value into lowercased directive names and their
    /// (unquoted) values, keeping commas inside quoted strings.
    static func directives(in fieldValue: String) -> [(name: String, value: String?)] {
        var result: [(String, String?)] = []
        var current = ""
        var inQuotes = false
        var escaped = false
        var pieces: [String] = []
        for character in fieldValue {
            if escaped {
                current.append(character)
                escaped = false
            } else if inQuotes, character == "\\" {
                current.append(character)
                escaped = true
            } else if character == "\"" {
                current.append(character)
                inQuotes.toggle()
            } else if character == ",", !inQuotes {
                pieces.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        pieces.append(current)
        for piece in pieces {
            let trimmed = piece.trimmingHTTPWhitespace
            guard !trimmed.isEmpty else { continue }
            guard let equals = trimmed.firstIndex(of: "=") else {
                result.append((trimmed.lowercased(), nil))
                continue
            }
            let name = String(trimmed[..<equals]).trimmingHTTPWhitespace.lowercased()
            let raw = String(trimmed[trimmed.index(after: equals)...]).trimmingHTTPWhitespace
            result.append((name, unquoted(raw)))
        }
        return result
    }

    /// The content of a quoted string (backslash escapes resolved), or `text` itself.
    private static func unquoted(_ text: String) -> String {
        guard text.count >= 2, text.first == "\"", text.last == "\"" else { return text }
        var result = ""
        var escaped = false
        for character in text.dropFirst().dropLast() {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}

extension StringProtocol {
    /// The string without leading and trailing spaces and tabs (HTTP's optional whitespace).
    var trimmingHTTPWhitespace: String {
        let isWhitespace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        guard let start = firstIndex(where: { !isWhitespace($0) }) else { return "" }
        let end = lastIndex(where: { !isWhitespace($0) })!
        return String(self[start ... end])
    }
}
