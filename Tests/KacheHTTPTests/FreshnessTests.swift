import Foundation
import Testing
@testable import KacheHTTP

@Suite struct FreshnessTests {
    let arrival = Date(timeIntervalSince1970: 1_800_000_000)

    func fields(_ pairs: [(String, String)]) -> HeaderFields { HeaderFields(pairs.map { (name: $0.0, value: $0.1) }) }
    func date(_ offset: TimeInterval) -> String { imfDate(arrival.addingTimeInterval(offset)) }

    func lifetime(_ pairs: [(String, String)], status: Int = 200, policy: CachePolicy = CachePolicy()) -> TimeInterval {
        let headers = fields(pairs)
        return Freshness.lifetime(
            status: status, headers: headers, directives: policy.responseDirectives(headers), responseTime: arrival, policy: policy
        )
    }

    @Test func maxAgeWinsOverExpires() {
        #expect(lifetime([("Cache-Control", "max-age=60"), ("Date", date(0)), ("Expires", date(600))]) == 60)
    }

    @Test func expiresIsMeasuredFromDateOrElseFromArrival() {
        #expect(lifetime([("Date", date(-100)), ("Expires", date(200))]) == 300)
        #expect(lifetime([("Expires", date(200))]) == 200)
        #expect(lifetime([("Date", date(0)), ("Expires", date(-50))]) == 0)
        #expect(lifetime([("Date", date(0)), ("Expires", "0")]) == 0)
    }

    @Test func noCacheMeansNoLifetimeWhateverElseIsSaid() {
        #expect(lifetime([("Cache-Control", "no-cache, max-age=600")]) == 0)
        #expect(lifetime([("Cache-Control", "no-cache")], policy: CachePolicy(fixedTTL: .seconds(60))) == 0)
    }

    @Test func thePolicysFixedAndMaximumTTLsApply() {
        #expect(lifetime([("Cache-Control", "max-age=600")], policy: CachePolicy(fixedTTL: .seconds(5))) == 5)
        #expect(lifetime([], policy: CachePolicy(fixedTTL: .seconds(5))) == 5)
        #expect(lifetime([("Cache-Control", "max-age=600")], policy: CachePolicy(maximumTTL: .seconds(30))) == 30)
        #expect(lifetime([("Cache-Control", "max-age=20")], policy: CachePolicy(maximumTTL: .seconds(30))) == 20)
    }

    @Test func theHeuristicIsATenthOfTheLastModifiedAgeByDefaultCappedAtAWeek() {
        let lastModified = [("Date", date(0)), ("Last-Modified", date(-10_000))]
        #expect(lifetime(lastModified) == 1000)
        #expect(lifetime([("Date", date(0)), ("Last-Modified", date(-100 * 86_400))]) == 7 * 86_400)
        #expect(lifetime(lastModified, policy: CachePolicy(heuristicFreshness: .off)) == 0)
        #expect(lifetime([("Date", date(0))]) == 0)
        let capped = CachePolicy(heuristicFreshness: .fractionOfAge(0.1, limit: .seconds(60)))
        #expect(lifetime(lastModified, policy: capped) == 60)
    }

    @Test func theHeuristicNeverAppliesWhenTheResponseForbidsIt() {
        let lastModified = [("Date", date(0)), ("Last-Modified", date(-10_000))]
        // An explicit lifetime, even an invalid or expired one, is no invitation to guess.
        #expect(lifetime(lastModified + [("Expires", "0")]) == 0)
        #expect(lifetime(lastModified + [("Expires", date(-1))]) == 0)
        #expect(lifetime(lastModified + [("Cache-Control", "max-age=0")]) == 0)
        #expect(lifetime(lastModified + [("Cache-Control", "no-cache")]) == 0)
        // A status that is not heuristically cacheable, unless marked public.
        #expect(lifetime(lastModified, status: 500) == 0)
        #expect(lifetime(lastModified, status: 201) == 0)
        #expect(lifetime(lastModified + [("Cache-Control", "public")], status: 500) == 1000)
        #expect(lifetime(lastModified, status: 404) == 1000)
    }

    /// The first member counts; anything but delta-seconds is ignored, as no `Age` is.
    @Test func theAgeFieldCountsItsFirstMemberAndAnInvalidOneIsIgnored() {
        func age(_ value: String) -> Int? { Freshness.ageSeconds(fields([("Age", value)])) }
        #expect(Freshness.ageSeconds(fields([])) == nil)
        #expect(age("30") == 30)
        #expect(age(" 30 ") == 30)
        #expect(age("0, 7200") == 0)       // two lines joined: the first counts
        for invalid in ["old, 0", "-7200", "7200.0", ""] {
            #expect(age(invalid) == nil, "\(invalid)")
            let headers = fields([("Date", date(0)), ("Age", invalid)])
            #expect(Freshness.correctedInitialAge(headers: headers, requestTime: arrival, responseTime: arrival) == 0)
        }
    }

    @Test func theInitialAgeIsTheLargerOfApparentAndCorrectedAge() {
        let sent = arrival.addingTimeInterval(-2)
        // Apparent age: arrival − Date = 30 s.
        #expect(Freshness.correctedInitialAge(headers: fields([("Date", date(-30))]), requestTime: sent, responseTime: arrival) == 30)
        // Age 50 + 2 s of response delay beats an apparent age of 30.
        #expect(Freshness.correctedInitialAge(headers: fields([("Date", date(-30)), ("Age", "50")]), requestTime: sent, responseTime: arrival) == 52)
        // A Date in the future is no negative age; a bad Age adds nothing (it makes the response stale instead).
        #expect(Freshness.correctedInitialAge(headers: fields([("Date", date(100)), ("Age", "x")]), requestTime: arrival, responseTime: arrival) == 0)
    }

    @Test func sharedMaxAgeReplacesMaxAgeAndExpiresForASharedCacheOnly() {
        let both = [("Cache-Control", "max-age=600, s-maxage=30"), ("Date", date(0)), ("Expires", date(900))]
        #expect(lifetime(both, policy: .shared) == 30)
        #expect(lifetime(both) == 600)
        let withExpires = [("Cache-Control", "s-maxage=30"), ("Date", date(0)), ("Expires", date(900))]
        #expect(lifetime(withExpires, policy: .shared) == 30)
        #expect(lifetime(withExpires) == 900)
    }

    @Test func aTargetedFieldReplacesCacheControlAndExpires() {
        var policy = CachePolicy.shared
        policy.targetedCacheControlFields = ["Acme-Cache-Control", "CDN-Cache-Control"]
        let pairs = [("Cache-Control", "max-age=10"), ("CDN-Cache-Control", "max-age=60"), ("Date", date(0)), ("Expires", date(900))]
        #expect(lifetime(pairs, policy: policy) == 60)
        #expect(lifetime(pairs, policy: .shared) == 10)
        // The first field of the list that is present and valid wins.
        #expect(lifetime(pairs + [("Acme-Cache-Control", "max-age=5")], policy: policy) == 5)
        #expect(lifetime(pairs + [("Acme-Cache-Control", "max-age=5, %%")], policy: policy) == 60)
        // Without max-age in it, Expires does not count either: the heuristic (or nothing) decides.
        #expect(lifetime([("CDN-Cache-Control", "public"), ("Date", date(0)), ("Expires", date(900))], policy: policy) == 0)
        #expect(lifetime([("CDN-Cache-Control", "public"), ("Date", date(0)), ("Last-Modified", date(-1000))], policy: policy) == 100)
    }
}

/// `date` as an IMF-fixdate (the format servers send), for building test headers.
func imfDate(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: date)
}
