import Foundation

/// A pointer to a stored variant, kept beside it when its response varies on
/// `Accept-Language` and is in one language (`Content-Language: de`): it lets
/// a request whose `Accept-Language` selects that language
/// (``SelectingValue/selectedLanguage(acceptLanguage:)``, `fr;q=0.5, de`)
/// find the variant another request (`en, de`) stored, as an optimal cache
/// does (the conformance suite's `vary-normalise-lang-select`).
///
/// It lives under ``CacheKey/languageAlias(of:value:language:)``, whose key
/// carries the vary index's token and every other varying field's value, so
/// an invalidated index makes the alias unreachable with its variants, and a
/// request with another `Accept` still misses. It holds the variant's key,
/// not a copy of the response: a revalidation that refreshes the variant
/// refreshes what the alias leads to, and the alias costs a few hundred bytes
/// whatever the body's size. A read follows it only to a response that still
/// says the same `Content-Language`.
struct LanguageAlias: Codable, Sendable, Equatable {
    /// The alias's own key, compared on reads like a response's key.
    var key: String
    /// The full key of the variant it leads to.
    var target: String
}
