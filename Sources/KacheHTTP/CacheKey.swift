import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The key a response is stored under: the method and the URL (without its
/// fragment), and for a response that varies, the values of the request
/// fields its `Vary` names.
///
/// ```
/// GET https://api.example.com/users/42
/// GET https://api.example.com/users/42
/// vary 3F2A…
/// accept: application/json
/// accept-language
/// ```
///
/// (A field the request does not carry is listed without a colon, so that it
/// differs from one sent empty.)
struct CacheKey: Sendable, Hashable {
    /// The whole key.
    let full: String

    /// The primary key of a request: nil when the request has no URL.
    init?(method: String, url: URL?) {
        guard let url else { return nil }
        var text = url.absoluteString
        if let hash = text.firstIndex(of: "#") { text = String(text[..<hash]) }
        full = "\(method.uppercased()) \(text)"
    }

    /// The key whose whole text is `full` (a key read back from a ``LanguageAlias``).
    init(full: String) {
        self.full = full
    }

    /// The key of the `206` parts kept for this primary key (``RangeParts``).
    var partsKey: CacheKey {
        CacheKey(full: full + "\nparts")
    }

    /// The key of one variant of the responses listed by `index`, selected by
    /// the request field values `value(name)` returns.
    func variant(of index: VaryIndex, value: (String) -> String?) -> CacheKey {
        var text = full + "\nvary " + index.token
        for name in index.fields {
            text += "\n" + name
            if let value = value(name) { text += ": " + SelectingValue.normalized(value, field: name) }
        }
        return CacheKey(full: text)
    }

    /// The key of the ``LanguageAlias`` that leads a request whose
    /// `Accept-Language` selects `language` to a variant of `index` in that
    /// language: as ``variant(of:value:)``, with the `accept-language` line
    /// replaced by `accept-language selects <language>` (no colon, so it never
    /// equals a variant's key; the entry's kind tells them apart as well).
    ///
    /// ```
    /// GET https://example.com/page
    /// vary 3F2A…
    /// accept: text/html
    /// accept-language selects de
    /// ```
    func languageAlias(of index: VaryIndex, value: (String) -> String?, language: String) -> CacheKey {
        var text = full + "\nvary " + index.token
        for name in index.fields {
            text += "\n" + name
            if name == "accept-language" {
                text += " selects " + language
            } else if let value = value(name) {
                text += ": " + SelectingValue.normalized(value, field: name)
            }
        }
        return CacheKey(full: text)
    }

    /// The key handed to the cache engine: the whole key when it fits within
    /// the engine's key length limit, else as much of it as fits and a 128-bit
    /// hash of the whole. The record stores the whole key and every read
    /// compares it, so a collision reads as a miss, never as another URL's response.
    func storageKey(limit: Int) -> String {
        guard full.utf8.count > limit else { return full }
        let bytes = Array(full.utf8)
        let digest = CacheKey.hex(CacheKey.fnv1a(bytes, basis: 0xCBF2_9CE4_8422_2325))
            + CacheKey.hex(CacheKey.fnv1a(bytes, basis: 0x8422_2325_CBF2_9CE4))
        let suffix = " #" + digest
        var prefix = ""
        for character in full {
            guard prefix.utf8.count + character.utf8.count + suffix.utf8.count <= limit else { break }
            prefix.append(character)
        }
        return prefix + suffix
    }

    /// The request fields named by a `Vary` value, lowercased, sorted and
    /// unique; nil for `Vary: *`, which no stored response can ever match
    /// (RFC 9111 section 4.1), so such a response is not stored.
    static func varyingFields(_ vary: String?) -> [String]? {
        guard let vary else { return [] }
        let names = vary.split(separator: ",").map { $0.trimmingHTTPWhitespace.lowercased() }.filter { !$0.isEmpty }
        guard !names.contains("*") else { return nil }
        return Array(Set(names)).sorted()
    }

    /// FNV-1a, 64 bits, from a chosen offset basis: two bases give two hashes.
    private static func fnv1a(_ bytes: [UInt8], basis: UInt64) -> UInt64 {
        bytes.reduce(basis) { ($0 ^ UInt64($1)) &* 0x100_0000_01B3 }
    }

    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
