import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

extension HTTPURLResponse {
    /// This response with the field `name` set to `value`, replacing one of
    /// that name in any letter case; `url` stands in for a missing URL.
    ///
    /// `HTTPURLResponse` can't be changed, so a new one is made, with the
    /// status, every other field, and `HTTP/1.1` (Foundation keeps no version).
    func settingField(_ name: String, to value: String, url fallback: URL) -> HTTPURLResponse {
        var fields: [String: String] = [:]
        for case let (key as String, fieldValue) in allHeaderFields where key.caseInsensitiveCompare(name) != .orderedSame {
            fields[key] = "\(fieldValue)"
        }
        fields[name] = value
        // Foundation returns nil only for a malformed URL, which a request's never is.
        return HTTPURLResponse(url: url ?? fallback, statusCode: statusCode, httpVersion: "HTTP/1.1", headerFields: fields)!
    }
}
