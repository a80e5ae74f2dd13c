import Foundation

/// How long a response stays fresh and how old it already is when it
/// arrives: RFC 9111 sections 4.2.1 to 4.2.3, in the simple form a private
/// client cache needs.
enum Freshness {
    /// The freshness lifetime in seconds (RFC 9111 section 4.2.1), for a private cache:
    ///
    /// 1. `no-cache`: 0 (every use is revalidated);
    /// 2. the policy's fixed TTL, when it has one;
    /// 3. `max-age` (`s-maxage` is for shared caches and ignored);
    /// 4. `Expires` minus `Date` (the response time stands in for a missing
    ///    `Date`; an `Expires` that is not a valid date means "already expired");
    /// 5. the policy's heuristic from `Last-Modified`, when it is on;
    /// 6. otherwise 0.
    ///
    /// The policy's maximum TTL caps the result.
    static func lifetime(
        headers: HeaderFields, directives: CacheControl, responseTime: Date, policy: CachePolicy
    ) -> TimeInterval {
        guard !directives.noCache else { return 0 }
        let lifetime: TimeInterval
        let dateValue = headers["Date"].flatMap { HTTPDate.parse($0, now: responseTime) } ?? responseTime
        if let fixed = policy.fixedTTL {
            lifetime = fixed.seconds
        } else if let maxAge = directives.maxAge {
            lifetime = TimeInterval(maxAge)
        } else if let expires = headers["Expires"] {
            lifetime = HTTPDate.parse(expires, now: responseTime).map { max(0, $0.timeIntervalSince(dateValue)) } ?? 0
        } else if case let .fractionOfAge(fraction, limit) = policy.heuristicFreshness,
                  let lastModified = headers["Last-Modified"].flatMap({ HTTPDate.parse($0, now: responseTime) }) {
            lifetime = min(max(0, dateValue.timeIntervalSince(lastModified)) * max(0, fraction), limit.seconds)
        } else {
            lifetime = 0
        }
        guard let maximum = policy.maximumTTL else { return lifetime }
        return min(lifetime, max(0, maximum.seconds))
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
        let ageValue = TimeInterval(headers["Age"].flatMap { CacheControl.deltaSeconds($0.trimmingHTTPWhitespace) } ?? 0)
        let responseDelay = max(0, responseTime.timeIntervalSince(requestTime))
        return max(apparentAge, ageValue + responseDelay)
    }
}
