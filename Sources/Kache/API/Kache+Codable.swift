import Foundation

extension Kache {
    /// Stores `value` encoded as JSON (Foundation's `JSONEncoder` with its
    /// default settings and sorted keys), so it reads back with `value(forKey:as:)`
    /// and is readable with `kache get`.
    ///
    /// ```swift
    /// try cache.set(profile, forKey: "profile/42", ttl: .seconds(600))
    /// let profile = try cache.value(forKey: "profile/42", as: Profile.self)
    /// ```
    /// - Throws: ``KacheError/encodingFailed(key:reason:)``, and whatever `set(_:forKey:ttl:)` throws.
    public func set(_ value: some Encodable, forKey key: String, ttl: Duration) throws {
        let data: Data
        do {
            data = try Kache.encoder.encode(value)
        } catch {
            throw KacheError.encodingFailed(key: key, reason: "\(error)")
        }
        try set(data, forKey: key, ttl: ttl)
    }

    /// The value stored under `key`, decoded from JSON as `type`; nil when there is none.
    /// - Throws: ``KacheError/decodingFailed(key:reason:)`` when the stored bytes are not a `type`.
    public func value<T: Decodable>(forKey key: String, as type: T.Type = T.self) throws -> T? {
        guard let data = data(forKey: key) else { return nil }
        return try Kache.decode(T.self, from: data, key: key)
    }

    static func decode<T: Decodable>(_ type: T.Type, from data: Data, key: String) throws -> T {
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw KacheError.decodingFailed(key: key, reason: "\(error)")
        }
    }

    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }
}
