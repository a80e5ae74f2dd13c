import Foundation

/// How long a response stays fresh and how old it already is when it
/// arrives: RFC 9111 sections 4.2.1 to 4.2.3, in the simple form.
enum Freshness {
    /// The freshness lifetime in seconds (RFC 9111 section 4.2.1), from the
    /// directives the cache acts on (``CachePolicy/responseDirectives(_:)``):
    ///
    /// 1. `no-cache`: 0 (every use is revalidated);
    /// 2. the policy's fixed TTL, when it has one;
    /// 3. `max-age` (for a shared cache, `s-maxage` when present);
    /// 4. `Expires` minus `Date` (the response time stands in for a missing
    ///    `Date`; an `Expires` that is not exactly one valid HTTP date, two
    ///    `Expires` lines included, means "already expired"), unless the
    ///    directives come from a targeted field, which overrides `Expires`;
    /// 5. the policy's heuristic from `Last-Modified` (RFC 9111 section 4.2.2),
    ///    only for a status code the policy lists as heuristically cacheable or a
    ///    response marked `public`;
    /// 6. otherwise 0.
    ///
    /// The policy's maximum TTL caps the result.
    static func lifetime(
        status: Int, headers: HeaderFields, directives: CacheControl, responseTime: Date, policy: CachePolicy
    ) -> TimeInterval {
        guard !directives.noCache else { return 0 }
        let lifetime: TimeInterval
        let dateValue = headers["Date"].flatMap { HTTPDate.parse($0, now: responseTime) } ?? responseTime
        if let fixed = policy.fixedTTL {
            lifetime = fixed.seconds
        } else if let maxAge = directives.maxAge {
            lifetime = TimeInterval(maxAge)
        } else if !directives.isTargeted, let expires = headers["Expires"] {
            lifetime = HTTPDate.parse(expires, now: responseTime).map { max(0, $0.timeIntervalSince(dateValue)) } ?? 0
        } else if case let .fractionOfAge(fraction, limit) = policy.heuristicFreshness,
                  policy.heuristicallyCacheableStatusCodes.contains(status) || directives.isPublic,
                  let lastModified = headers["Last-Modified"].flatMap({ HTTPDate.parse($0, now: responseTime) }) {
            lifetime = min(max(0, dateValue.timeIntervalSince(lastModified)) * max(0, fraction), limit.seconds)
        } else {
            lifetime = 0
        }
        guard let maximum = policy.maximumTTL else { return lifetime }
        return min(lifetime, max(0, maximum.seconds))
    }

    /// Whether the response states its own lifetime (`max-age`, for a shared
    /// cache `s-maxage`, or `Expires` unless a targeted field overrides it;
    /// valid or not): only then may a status code outside the heuristically
    /// cacheable ones be stored (RFC 9111 section 3).
    static func hasExplicitLifetime(headers: HeaderFields, directives: CacheControl) -> Bool {
        directives.maxAge != nil || !directives.isTargeted && headers["Expires"] != nil
    }

    /// The `Age` field in seconds (RFC 9111 section 5.1): its first member
    /// (a list, or two lines that Foundation joined with a comma, counts
    /// from the first), as delta-seconds. Nil when there is none, or when it
    /// is not a non-negative integer (`old`, `-5`, `1.5`): section 5.1 says a
    /// cache SHOULD ignore an invalid `Age`, and the conformance suite checks it.
    static func ageSeconds(_ headers: HeaderFields) -> Int? {
        guard let field = headers["Age"] else { return nil }
        let first = field.split(separator: ",", omittingEmptySubsequences: false).first.map { $0.trimmingHTTPWhitespace } ?? ""
        return CacheControl.deltaSeconds(first)
    }

    /// The response's age when it arrived, in seconds (RFC 9111 section 4.2.3):
    ///
    /// ```
    /// apparent_age          = max(0, response_time - date_value)
    /// corrected_age_value   = age_value + (response_time - request_time)
    /// corrected_initial_age = max(apparent_age, corrected_age_value)
    /// ```
    ///
    /// Its age at a later instant is this plus the time it has spent in the cache.
    static func correctedInitialAge(headers: HeaderFields, requestTime: Date, responseTime: Date) -> TimeInterval {
        let dateValue = headers["Date"].flatMap { HTTPDate.parse($0, now: responseTime) } ?? responseTime
        let apparentAge = max(0, responseTime.timeIntervalSince(dateValue))
        let ageValue = TimeInterval(ageSeconds(headers) ?? 0)
        let responseDelay = max(0, responseTime.timeIntervalSince(requestTime))
        return max(apparentAge, ageValue + responseDelay)
    }
}
