import Foundation

/// What the primary key of a URL holds when its response carries `Vary`: the
/// request fields the responses vary with. Each variant is stored under its
/// own key (``CacheKey/variant(of:value:)``).
///
/// The token goes into every variant's key. An index written afresh (first
/// variant, different `Vary` fields, or after the URL was invalidated) gets a
/// new token, so variants stored under an older index can never be found again;
/// they leave with their TTL.
struct VaryIndex: Codable, Sendable, Equatable {
    /// The primary key, compared on reads like a response's key.
    var key: String
    /// The varying request fields: lowercased, sorted, unique.
    var fields: [String]
    /// A random token that names this generation of the index.
    var token: String
    /// The time (seconds since 1970) up to which the index must stay: the
    /// latest time any of its variants is kept.
    var keepUntil: Double

    /// A new index with a fresh token.
    init(key: String, fields: [String], keepUntil: Date) {
        self.key = key
        self.fields = fields
        token = String(UInt64.random(in: .min ... .max), radix: 16, uppercase: true)
        self.keepUntil = keepUntil.timeIntervalSince1970
    }
}
