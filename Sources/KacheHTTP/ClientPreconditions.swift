import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The conditional fields a caller sent with a GET or HEAD, as a cache treats
/// them (RFC 9111 section 4.3.2).
///
/// `If-None-Match` and `If-Modified-Since` are the cache's to answer when it
/// answers from a stored response: its answer is then a `304 Not Modified`
/// when they match, else the stored response itself. `If-Match`,
/// `If-Unmodified-Since` and `If-Range` are left to the server: a request with
/// one of them goes out as it is (``areForTheServer``).
struct ClientPreconditions: Sendable {
    /// The fields the cache evaluates.
    static let evaluatedFields = ["If-None-Match", "If-Modified-Since"]
    /// The fields only the server evaluates here: `If-Match` and
    /// `If-Unmodified-Since` don't apply to a cache (RFC 9111 section 4.3.2), and
    /// `If-Range` would ask the cache to choose between a part and the whole.
    static let serverFields = ["If-Match", "If-Unmodified-Since", "If-Range"]

    /// The request's `If-None-Match`, as sent.
    var ifNoneMatch: String?
    /// The request's `If-Modified-Since`, as sent.
    var ifModifiedSince: String?
    /// Whether the request carries a precondition only the server evaluates.
    var areForTheServer: Bool

    init(_ request: URLRequest) {
        ifNoneMatch = request.value(forHTTPHeaderField: "If-None-Match")
        ifModifiedSince = request.value(forHTTPHeaderField: "If-Modified-Since")
        areForTheServer = Self.serverFields.contains { request.value(forHTTPHeaderField: $0) != nil }
    }

    /// Whether there is anything for the cache to evaluate.
    var isEmpty: Bool { ifNoneMatch == nil && ifModifiedSince == nil }

    /// `request` without the fields the cache evaluates: what it looks up,
    /// coalesces and, when it revalidates, sends with validators of its own.
    func removed(from request: URLRequest) -> URLRequest {
        var request = request
        for name in Self.evaluatedFields { request.setValue(nil, forHTTPHeaderField: name) }
        return request
    }

    /// Whether `response`, the answer the cache chose, is "not modified" for
    /// these preconditions (RFC 9110 sections 13.1.2, 13.1.3 and 13.2.1):
    /// only a `2xx` answer is compared; `If-None-Match` (`*`, or a list compared
    /// weakly with the `ETag`) decides when present; else `If-Modified-Since`,
    /// a valid HTTP date, against the `Last-Modified` (without one, the `Date`,
    /// as RFC 9111 section 4.3.2 says). A value that does not parse never
    /// matches: a `200` is always a correct answer to a conditional GET.
    func selectNotModified(_ response: HTTPURLResponse) -> Bool {
        guard (200 ..< 300).contains(response.statusCode) else { return false }
        if let ifNoneMatch {
            guard let list = EntityTag.List(ifNoneMatch) else { return false }
            return list.weaklyContains(response.value(forHTTPHeaderField: "ETag").flatMap { EntityTag($0) })
        }
        guard let ifModifiedSince, let since = HTTPDate.parse(ifModifiedSince),
              let modified = response.value(forHTTPHeaderField: "Last-Modified") ?? response.value(forHTTPHeaderField: "Date"),
              let lastModified = HTTPDate.parse(modified)
        else { return false }
        return lastModified <= since
    }

    /// The fields a `304` made from `response` carries: those RFC 9110 section
    /// 15.4.5 requires when the `200` has them, the `Age` the cache gives every
    /// stored response, and `Last-Modified` when there is no `ETag` (it guides
    /// the caller's cache then). Other representation fields stay out.
    private static let notModifiedFields = ["Cache-Control", "Content-Location", "Date", "ETag", "Expires", "Vary", "Age"]

    /// The `304 Not Modified` that answers these preconditions instead of
    /// `response`, an answer for `url`.
    static func notModified(insteadOf response: HTTPURLResponse, url: URL) -> HTTPURLResponse {
        var fields: [String: String] = [:]
        var names = notModifiedFields
        if response.value(forHTTPHeaderField: "ETag") == nil { names.append("Last-Modified") }
        for name in names {
            if let value = response.value(forHTTPHeaderField: name) { fields[name] = value }
        }
        // Foundation returns nil only for a malformed URL, which a request's never is.
        return HTTPURLResponse(url: response.url ?? url, statusCode: 304, httpVersion: "HTTP/1.1", headerFields: fields)!
    }
}
