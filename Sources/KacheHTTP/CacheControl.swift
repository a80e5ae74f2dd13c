import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The directives of a `Cache-Control` header field (RFC 9111 section 5.2)
/// that a private client cache acts on, parsed from a request or a response.
///
/// Directive names are case-insensitive; values may be tokens or quoted
/// strings (which may contain commas). When a directive appears twice, the
/// first occurrence counts (RFC 9111 section 4.2.1).
struct CacheControl: Sendable, Equatable {
    /// `max-age=N`: fresh for N seconds (response), or no older than N seconds (request).
    /// A value that is not a number reads as 0, so the response is stale
    /// (RFC 9111 section 4.2.1 encourages exactly that).
    var maxAge: Int?
    /// `s-maxage=N`, for shared caches only: parsed, and ignored by this private cache.
    var sharedMaxAge: Int?
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
    /// `private`: only a private cache (this one) may store the response.
    var isPrivate = false
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
            case "no-store": noStore = true
            case "must-understand": mustUnderstand = true
            case "no-cache": noCache = true
            case "must-revalidate": mustRevalidate = true
            case "private": isPrivate = true
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
