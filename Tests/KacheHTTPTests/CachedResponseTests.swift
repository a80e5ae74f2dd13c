import Foundation
import Testing
@testable import KacheHTTP

@Suite struct CachedResponseTests {
    let arrival = Date(timeIntervalSince1970: 1_800_000_000)

    func response(_ pairs: [(String, String)], body: Data = Data("body".utf8), policy: CachePolicy = CachePolicy()) -> CachedResponse {
        CachedResponse(
            key: "GET http://127.0.0.1/x", url: URL(string: "http://127.0.0.1/x")!, status: 200,
            headers: HeaderFields(pairs.map { (name: $0.0, value: $0.1) }), body: body,
            requestTime: arrival.addingTimeInterval(-1), responseTime: arrival, policy: policy
        )
    }

    @Test func freshnessEndsAtArrivalPlusLifetimeMinusInitialAge() {
        let stored = response([("Cache-Control", "max-age=100"), ("Age", "30")])
        #expect(stored.initialAge == 31)  // Age 30 + 1 s response delay
        #expect(stored.freshUntil == arrival.addingTimeInterval(69))
        #expect(stored.isFresh(at: arrival.addingTimeInterval(68), policy: CachePolicy()))
        #expect(!stored.isFresh(at: arrival.addingTimeInterval(69), policy: CachePolicy()))
        #expect(stored.age(at: arrival.addingTimeInterval(10)) == 41)
        #expect(stored.httpResponse(at: arrival.addingTimeInterval(10)).value(forHTTPHeaderField: "Age") == "41")
    }

    @Test func theEngineKeepsAResponseForItsFreshnessPlusTheLongestStaleWindow() {
        let policy = CachePolicy(revalidationWindow: .seconds(1000))
        #expect(response([("Cache-Control", "max-age=100")], policy: policy).retention(at: arrival, policy: policy) == .seconds(99))
        #expect(response([("Cache-Control", "max-age=100"), ("ETag", "\"a\"")], policy: policy)
            .retention(at: arrival, policy: policy) == .seconds(1099))
        #expect(response([("Cache-Control", "max-age=100, stale-if-error=5000"), ("ETag", "\"a\"")], policy: policy)
            .retention(at: arrival, policy: policy) == .seconds(5099))
        // Stale, without validator or stale-if-error: nothing left to keep.
        #expect(response([("Cache-Control", "max-age=0")], policy: policy).retention(at: arrival, policy: policy) == nil)
        #expect(response([], policy: policy).retention(at: arrival, policy: policy) == nil)
        // Last-Modified long ago: the heuristic's cap of 7 days, then the revalidation window.
        #expect(response([("Last-Modified", "Sun, 06 Nov 1994 08:49:37 GMT")], policy: policy)
            .retention(at: arrival, policy: policy) == .seconds(7 * 86_400 - 1 + 1000))
    }

    @Test func staleIfErrorIsForbiddenByMustRevalidateAndNoCache() {
        let policy = CachePolicy(staleIfError: .atLeast(.seconds(60)))
        let later = arrival.addingTimeInterval(30)
        #expect(response([("Cache-Control", "max-age=0")]).canServeStale(at: later, policy: policy))
        #expect(!response([("Cache-Control", "max-age=0")]).canServeStale(at: later, policy: CachePolicy()))
        #expect(!response([("Cache-Control", "max-age=0, must-revalidate")]).canServeStale(at: later, policy: policy))
        #expect(!response([("Cache-Control", "no-cache, stale-if-error=600")]).canServeStale(at: later, policy: policy))
    }

    @Test func a304ReplacesFieldsButNotContentLengthOrHopByHopOnes() {
        let stored = response([("Content-Length", "4"), ("ETag", "\"a\""), ("Cache-Control", "max-age=10"), ("X-Old", "1")])
        let notModified = HeaderFields([
            (name: "content-length", value: "0"), (name: "cache-control", value: "max-age=60"),
            (name: "Connection", value: "close"), (name: "X-New", value: "2"),
        ])
        let later = arrival.addingTimeInterval(100)
        let refreshed = stored.refreshed(by: notModified, requestTime: later, responseTime: later, policy: CachePolicy())
        #expect(refreshed.headers["Content-Length"] == "4")
        #expect(refreshed.headers["Cache-Control"] == "max-age=60")
        #expect(refreshed.headers["X-Old"] == "1")
        #expect(refreshed.headers["X-New"] == "2")
        #expect(refreshed.headers["Connection"] == nil)
        #expect(refreshed.body == stored.body)
        #expect(refreshed.freshUntil == arrival.addingTimeInterval(160))
    }

    @Test func aRefreshedResponseTakesDateAndAgeFromThe304Alone() {
        let stored = response([("Cache-Control", "max-age=60"), ("Date", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Age", "40")])
        let later = arrival.addingTimeInterval(500)
        let refreshed = stored.refreshed(by: HeaderFields([(name: "ETag", value: "\"a\"")]), requestTime: later, responseTime: later, policy: CachePolicy())
        #expect(refreshed.headers["Date"] == nil)
        #expect(refreshed.headers["Age"] == nil)
        #expect(refreshed.initialAge == 0)
        #expect(refreshed.freshUntil == later.addingTimeInterval(60))
    }

    @Test func storingFollowsStatusExplicitLifetimeAndNoStore() {
        func storable(_ status: Int, _ pairs: [(String, String)], request: CacheControl = CacheControl(nil)) -> Bool {
            CachedResponse.isStorable(status: status, headers: HeaderFields(pairs.map { (name: $0.0, value: $0.1) }), request: request, policy: CachePolicy())
        }
        #expect(storable(200, []))
        #expect(storable(404, []))
        #expect(storable(200, [("Cache-Control", "private")]))
        #expect(!storable(200, [("Cache-Control", "no-store")]))
        // must-understand (RFC 9111 section 5.2.2.3): an understood status overrides no-store; any other is never stored.
        #expect(storable(200, [("Cache-Control", "no-store, must-understand, max-age=60")]))
        #expect(storable(404, [("Cache-Control", "must-understand, no-store")]))
        #expect(!storable(299, [("Cache-Control", "must-understand, max-age=60")]))
        #expect(!storable(200, [("Cache-Control", "no-store, must-understand")], request: CacheControl("no-store")))
        #expect(!storable(200, [], request: CacheControl("no-store")))
        // Any final status with a lifetime of its own; without one, only the heuristic codes (or public/private).
        #expect(storable(302, [("Cache-Control", "max-age=60")]))
        #expect(storable(500, [("Expires", "Sun, 06 Nov 1994 08:49:37 GMT")]))
        #expect(!storable(500, []))
        #expect(!storable(201, [("ETag", "\"a\"")]))
        #expect(storable(403, [("Cache-Control", "public")]))
        // Never: interim responses, 304s, and 206s (stored as parts instead).
        #expect(!storable(101, [("Cache-Control", "max-age=60")]))
        #expect(!storable(304, [("Cache-Control", "max-age=60")]))
        #expect(!storable(206, [("Cache-Control", "max-age=60")]))
    }

    /// RFC 9111 sections 3 and 3.5 for a shared cache, each beside the private answer.
    @Test func aSharedCacheRefusesPrivateAndUnsharedAuthorizedResponses() {
        func storable(_ pairs: [(String, String)], status: Int = 200, authorized: Bool = false, policy: CachePolicy) -> Bool {
            CachedResponse.isStorable(
                status: status, headers: HeaderFields(pairs.map { (name: $0.0, value: $0.1) }), request: CacheControl(nil),
                authorized: authorized, policy: policy
            )
        }
        let plainPrivate = [("Cache-Control", "private, max-age=60")]
        #expect(storable(plainPrivate, policy: CachePolicy()))
        #expect(!storable(plainPrivate, policy: .shared))
        #expect(storable([("Cache-Control", #"private="X-User", max-age=60"#)], policy: .shared))
        // private is a reason to store a 201 for a private cache only; s-maxage for a shared one only.
        #expect(storable([("Cache-Control", "private")], status: 201, policy: CachePolicy()))
        #expect(!storable([("Cache-Control", #"private="X-User""#)], status: 201, policy: .shared))
        #expect(storable([("Cache-Control", "s-maxage=60")], status: 201, policy: .shared))
        #expect(!storable([("Cache-Control", "s-maxage=60")], status: 201, policy: CachePolicy()))

        let fresh = [("Cache-Control", "max-age=60")]
        #expect(storable(fresh, authorized: true, policy: CachePolicy()))
        #expect(!storable(fresh, authorized: true, policy: .shared))
        #expect(storable(fresh, authorized: false, policy: .shared))
        for allowing in ["public", "must-revalidate, max-age=60", "s-maxage=60"] {
            #expect(storable([("Cache-Control", allowing)], authorized: true, policy: .shared), "\(allowing)")
        }
        #expect(!storable([("Cache-Control", "proxy-revalidate, max-age=60")], authorized: true, policy: .shared))
    }

    @Test func aSharedCopyLeavesOutTheFieldsAQualifiedPrivateNames() throws {
        let record = CachedResponse(
            key: "GET http://127.0.0.1/p", url: URL(string: "http://127.0.0.1/p")!, status: 200,
            headers: HeaderFields([
                (name: "Cache-Control", value: #"private="x-user, Set-Cookie", max-age=60"#),
                (name: "X-User", value: "alice"), (name: "set-cookie", value: "s=1"), (name: "X-Public", value: "yes"),
            ]),
            body: Data(), requestTime: arrival, responseTime: arrival, policy: .shared
        )
        #expect(record.storedForm(policy: CachePolicy()) == record)
        let shared = try #require(record.storedForm(policy: .shared))
        #expect(shared.headers["X-User"] == nil)
        #expect(shared.headers["Set-Cookie"] == nil)
        #expect(shared.headers["X-Public"] == "yes")
        #expect(shared.freshUntil == record.freshUntil)
    }

    /// RFC 9111 section 5.1: an invalid `Age` is ignored, so the response is
    /// as fresh as it would be without one (the conformance suite's
    /// `age-parse-nonnumeric`, `-negative` and `-float`). A valid first member still counts.
    @Test func anInvalidAgeIsIgnored() {
        for invalid in ["old, 0", "-7200", "7200.0"] {
            let stored = response([("Cache-Control", "max-age=3600"), ("Age", invalid)])
            #expect(stored.isFresh(at: arrival.addingTimeInterval(3500), policy: CachePolicy()), "\(invalid)")
            #expect(!stored.isFresh(at: arrival.addingTimeInterval(3601), policy: CachePolicy()), "\(invalid)")
        }
        #expect(!response([("Cache-Control", "max-age=3600"), ("Age", "3500, old")]).isFresh(at: arrival.addingTimeInterval(200), policy: CachePolicy()))
    }
}

@Suite struct StoredEntryTests {
    @Test func aResponseRoundTripsWithItsBodyRawAfterTheMetadata() throws {
        let body = Data((0 ..< 3000).map { UInt8(truncatingIfNeeded: $0 &* 7) })  // not UTF-8
        let stored = CachedResponse(
            key: "GET http://127.0.0.1/bin", url: URL(string: "http://127.0.0.1/bin")!, status: 203,
            headers: HeaderFields([(name: "Content-Type", value: "application/octet-stream"), (name: "ETag", value: "W/\"x\"")]),
            body: body, requestTime: Date(timeIntervalSince1970: 1_800_000_000.25),
            responseTime: Date(timeIntervalSince1970: 1_800_000_000.5), initialAge: 3.5,
            freshUntil: Date(timeIntervalSince1970: 1_800_000_100)
        )
        let bytes = try StoredEntry.response(stored).encoded()
        #expect(bytes.suffix(body.count) == body)
        #expect(bytes.count < body.count + 600)
        #expect(try StoredEntry(decoding: bytes) == .response(stored))
    }

    @Test func aVaryIndexRoundTrips() throws {
        let index = VaryIndex(key: "GET http://127.0.0.1/v", fields: ["accept", "accept-language"], keepUntil: Date(timeIntervalSince1970: 1_900_000_000))
        #expect(try StoredEntry(decoding: StoredEntry.varyIndex(index).encoded()) == .varyIndex(index))
    }

    @Test func aLanguageAliasRoundTrips() throws {
        let alias = LanguageAlias(key: "GET http://127.0.0.1/v\nvary 1\naccept-language selects de", target: "GET http://127.0.0.1/v\nvary 1\naccept-language: de, en")
        #expect(try StoredEntry(decoding: StoredEntry.languageAlias(alias).encoded()) == .languageAlias(alias))
    }

    @Test func bytesThatAreNotAnEntryAreRejected() throws {
        let good = try StoredEntry.varyIndex(VaryIndex(key: "k", fields: ["a"], keepUntil: Date())).encoded()
        #expect(throws: StoredEntry.Damage.self) { try StoredEntry(decoding: Data("plain value from somebody else".utf8)) }
        #expect(throws: StoredEntry.Damage.self) { try StoredEntry(decoding: Data()) }
        #expect(throws: StoredEntry.Damage.self) { try StoredEntry(decoding: good.prefix(good.count - 3)) }
        var otherVersion = good
        otherVersion[4] = 9
        #expect(throws: StoredEntry.Damage.self) { try StoredEntry(decoding: otherVersion) }
        var otherKind = good
        otherKind[5] = 7
        #expect(throws: StoredEntry.Damage.self) { try StoredEntry(decoding: otherKind) }
        // A slice not starting at index 0 decodes like a fresh copy.
        #expect(try StoredEntry(decoding: (Data([0xFF]) + good).dropFirst()) == StoredEntry(decoding: good))
    }
}

@Suite struct CacheKeyTests {
    @Test func theKeyIsMethodAndURLWithoutFragment() {
        #expect(CacheKey(method: "get", url: URL(string: "https://example.com/a?b=1#top"))?.full == "GET https://example.com/a?b=1")
        #expect(CacheKey(method: "GET", url: nil) == nil)
    }

    @Test func variantsDependOnlyOnTheNamedFieldsAndTellAbsentFromEmpty() {
        let primary = CacheKey(method: "GET", url: URL(string: "https://example.com/v"))!
        let index = VaryIndex(key: primary.full, fields: ["accept", "accept-language"], keepUntil: Date())
        let json = primary.variant(of: index) { ["accept": "application/json", "accept-language": "fr"][$0] }
        let jsonSpaced = primary.variant(of: index) { ["accept": "  application/json", "accept-language": "fr "][$0] }
        let absent = primary.variant(of: index) { ["accept": "application/json"][$0] }
        let empty = primary.variant(of: index) { ["accept": "application/json", "accept-language": ""][$0] }
        #expect(json == jsonSpaced)
        #expect(json != absent)
        #expect(absent != empty)
        let otherGeneration = VaryIndex(key: primary.full, fields: index.fields, keepUntil: Date())
        #expect(primary.variant(of: otherGeneration) { ["accept": "application/json", "accept-language": "fr"][$0] } != json)
    }

    @Test func varyFieldsAreLowercasedSortedAndUniqueAndStarMatchesNothing() {
        #expect(CacheKey.varyingFields(nil) == [])
        #expect(CacheKey.varyingFields("Accept-Language, accept ,ACCEPT") == ["accept", "accept-language"])
        #expect(CacheKey.varyingFields("Accept, *") == nil)
    }

    @Test func aKeyTooLongForTheEngineIsShortenedToAPrefixAndAHash() {
        let long = CacheKey(method: "GET", url: URL(string: "https://example.com/?q=" + String(repeating: "a", count: 2000)))!
        let other = CacheKey(method: "GET", url: URL(string: "https://example.com/?q=" + String(repeating: "a", count: 1999) + "b"))!
        let short = long.storageKey(limit: 1024)
        #expect(short.utf8.count <= 1024)
        #expect(short.hasPrefix("GET https://example.com/?q=aaa"))
        #expect(short == long.storageKey(limit: 1024))
        #expect(short != other.storageKey(limit: 1024))
        let fits = CacheKey(method: "GET", url: URL(string: "https://example.com/x"))!
        #expect(fits.storageKey(limit: 1024) == fits.full)
    }
}
