import Foundation
import Testing
@testable import KacheHTTP

@Suite struct FreshnessTests {
    let arrival = Date(timeIntervalSince1970: 1_800_000_000)

    func fields(_ pairs: [(String, String)]) -> HeaderFields { HeaderFields(pairs.map { (name: $0.0, value: $0.1) }) }
    func date(_ offset: TimeInterval) -> String { imfDate(arrival.addingTimeInterval(offset)) }

    func lifetime(_ pairs: [(String, String)], policy: CachePolicy = CachePolicy()) -> TimeInterval {
        let headers = fields(pairs)
        return Freshness.lifetime(headers: headers, directives: CacheControl(headers["Cache-Control"]), responseTime: arrival, policy: policy)
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

    @Test func theHeuristicNeedsLastModifiedAndBeingTurnedOn() {
        let lastModified = [("Date", date(0)), ("Last-Modified", date(-10_000))]
        #expect(lifetime(lastModified) == 0)
        let on = CachePolicy(heuristicFreshness: .fractionOfAge(0.1, limit: .seconds(86_400)))
        #expect(lifetime(lastModified, policy: on) == 1000)
        #expect(lifetime([("Date", date(0))], policy: on) == 0)
        let capped = CachePolicy(heuristicFreshness: .fractionOfAge(0.1, limit: .seconds(60)))
        #expect(lifetime(lastModified, policy: capped) == 60)
    }

    @Test func theInitialAgeIsTheLargerOfApparentAndCorrectedAge() {
        let sent = arrival.addingTimeInterval(-2)
        // Apparent age: arrival − Date = 30 s.
        #expect(Freshness.correctedInitialAge(headers: fields([("Date", date(-30))]), requestTime: sent, responseTime: arrival) == 30)
        // Age 50 + 2 s of response delay beats an apparent age of 30.
        #expect(Freshness.correctedInitialAge(headers: fields([("Date", date(-30)), ("Age", "50")]), requestTime: sent, responseTime: arrival) == 52)
        // A Date in the future is no negative age; a bad Age is ignored.
        #expect(Freshness.correctedInitialAge(headers: fields([("Date", date(100)), ("Age", "x")]), requestTime: arrival, responseTime: arrival) == 0)
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
