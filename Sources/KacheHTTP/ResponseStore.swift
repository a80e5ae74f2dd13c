import Foundation
import Kache

/// Where a ``CachingClient`` keeps its entries: the cache's top level or a
/// Pool, through the engine's public API only. It knows the entry layout
/// (``StoredEntry``) and the two-step lookup of varying responses (three
/// steps when a ``LanguageAlias`` leads to a variant); it knows nothing of
/// HTTP's freshness rules.
struct ResponseStore: Sendable {
    let cache: Kache
    let pool: Kache.Pool?

    /// What a lookup found for a request.
    struct Lookup {
        /// The key the request's response lives under, as far as is known: the
        /// variant's key when the URL has a vary index (the key of another
        /// request's variant when a ``LanguageAlias`` led to it), else the primary key.
        var key: CacheKey
        /// The stored response, or nil.
        var response: CachedResponse?
    }

    /// Finds the stored response for a request with primary key `primary`;
    /// `value` gives the request's field values (for `Vary`). A request that
    /// matches no variant exactly gets the one in the language its
    /// `Accept-Language` selects, if a ``LanguageAlias`` leads to one.
    func lookup(_ primary: CacheKey, value: (String) -> String?) async -> Lookup {
        switch await read(primary) {
        case let .response(response)?:
            return Lookup(key: primary, response: response)
        case let .varyIndex(index)?:
            let variant = primary.variant(of: index, value: value)
            if case let .response(response)? = await read(variant) { return Lookup(key: variant, response: response) }
            return await selectedByLanguage(primary, index: index, value: value) ?? Lookup(key: variant, response: nil)
        case .languageAlias?, nil:
            return Lookup(key: primary, response: nil)
        }
    }

    /// The variant of `index` whose single `Content-Language` is the language
    /// the request's `Accept-Language` selects, through its ``LanguageAlias``;
    /// nil when the index does not vary on `Accept-Language`, the request
    /// selects no language for certain, no alias exists, or the variant it
    /// names is gone or now says another language.
    private func selectedByLanguage(_ primary: CacheKey, index: VaryIndex, value: (String) -> String?) async -> Lookup? {
        guard index.fields.contains("accept-language"),
              let language = SelectingValue.selectedLanguage(acceptLanguage: value("accept-language")),
              case let .languageAlias(alias)? = await read(primary.languageAlias(of: index, value: value, language: language))
        else { return nil }
        let target = CacheKey(full: alias.target)
        guard case let .response(response)? = await read(target),
              SelectingValue.contentLanguage(response.headers["Content-Language"]) == language
        else { return nil }
        return Lookup(key: target, response: response)
    }

    /// Stores `response` for a request with primary key `primary`, for as long
    /// as it is useful from `now`. With varying fields it goes under its
    /// variant's key (`variant`, when it is a variant of the current index: a
    /// refreshed response found through a ``LanguageAlias`` goes back where it
    /// was) and the primary key holds the vary index. A variant in one
    /// language of a response that varies on `Accept-Language` also gets its
    /// ``LanguageAlias``.
    /// - Returns: false when the response is useless from now on and was not stored.
    /// - Throws: the engine's error (value too large, disk full…).
    func save(
        _ response: CachedResponse, primary: CacheKey, varyingFields: [String],
        value: (String) -> String?, variant: CacheKey? = nil, now: Date, policy: CachePolicy
    ) async throws -> Bool {
        guard let ttl = response.retention(at: now, policy: policy) else { return false }
        var response = response
        guard !varyingFields.isEmpty else {
            response.key = primary.full
            try await write(.response(response), key: primary, ttl: ttl)
            return true
        }
        let keepUntil = now.addingTimeInterval(ttl.seconds)
        var index: VaryIndex
        if case let .varyIndex(existing)? = await read(primary), existing.fields == varyingFields {
            index = existing
            index.keepUntil = max(index.keepUntil, keepUntil.timeIntervalSince1970)
        } else {
            index = VaryIndex(key: primary.full, fields: varyingFields, keepUntil: keepUntil)
        }
        let variant = variant.flatMap { $0.full.hasPrefix(primary.full + "\nvary " + index.token + "\n") ? $0 : nil }
            ?? primary.variant(of: index, value: value)
        response.key = variant.full
        try await write(.response(response), key: variant, ttl: ttl)
        if index.fields.contains("accept-language"), let language = SelectingValue.contentLanguage(response.headers["Content-Language"]) {
            let alias = primary.languageAlias(of: index, value: value, language: language)
            try await write(.languageAlias(LanguageAlias(key: alias.full, target: variant.full)), key: alias, ttl: ttl)
        }
        let indexTTL = max(index.keepUntil - now.timeIntervalSince1970, ttl.seconds)
        try await write(.varyIndex(index), key: primary, ttl: .seconds(indexTTL))
        return true
    }

    /// Removes the entry under `key` (a primary key's removal makes every
    /// variant unreachable: a new index gets a new token).
    func remove(_ key: CacheKey) async {
        let storageKey = key.storageKey(limit: cache.configuration.maximumKeyLength)
        if let pool { await pool.removeValue(forKey: storageKey) } else { await cache.removeValue(forKey: storageKey) }
    }

    // MARK: - Entries

    /// The entry under `key`, or nil. An entry that does not decode, or whose
    /// stored key differs (a hash collision of shortened keys), reads as nil;
    /// one that does not decode is removed.
    private func read(_ key: CacheKey) async -> StoredEntry? {
        let storageKey = key.storageKey(limit: cache.configuration.maximumKeyLength)
        let found = if let pool { await pool.data(forKey: storageKey) } else { await cache.data(forKey: storageKey) }
        guard let bytes = found else { return nil }
        guard let entry = try? StoredEntry(decoding: bytes) else {
            await remove(key)
            return nil
        }
        switch entry {
        case let .response(response) where response.key == key.full: return entry
        case let .varyIndex(index) where index.key == key.full: return entry
        case let .languageAlias(alias) where alias.key == key.full: return entry
        default: return nil
        }
    }

    private func write(_ entry: StoredEntry, key: CacheKey, ttl: Duration) async throws {
        let storageKey = key.storageKey(limit: cache.configuration.maximumKeyLength)
        let bytes = try entry.encoded()
        if let pool { try await pool.set(bytes, forKey: storageKey, ttl: ttl) } else { try await cache.set(bytes, forKey: storageKey, ttl: ttl) }
    }
}
