import Foundation
import Testing
@testable import KacheHTTP

@Suite struct HTTPDateTests {
    /// 1994-11-06T08:49:37Z, the example of RFC 9110.
    let example = Date(timeIntervalSince1970: 784_111_777)

    @Test func theThreeFormatsOfRFC9110Parse() {
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == example)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT", now: Date(timeIntervalSince1970: 800_000_000)) == example)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == example)
    }

    @Test func leapDaysAndTheEpochAreRight() {
        #expect(HTTPDate.parse("Thu, 01 Jan 1970 00:00:00 GMT") == Date(timeIntervalSince1970: 0))
        #expect(HTTPDate.parse("Tue, 29 Feb 2000 12:00:00 GMT") == Date(timeIntervalSince1970: 951_825_600))
        #expect(HTTPDate.parse("Fri, 29 Feb 2030 00:00:00 GMT") == nil)
        #expect(HTTPDate.parse("Fri, 01 Mar 2030 00:00:00 GMT") == Date(timeIntervalSince1970: 1_898_553_600))
    }

    @Test func twoDigitYearsAreNeverMoreThanFiftyYearsAhead() {
        let now = HTTPDate.parse("Sun, 01 Jan 2026 00:00:00 GMT")!
        // 2080 would be 54 years ahead: it is 1980. 2075 is 49 years ahead: it stays.
        #expect(HTTPDate.parse("Tuesday, 01-Jan-80 00:00:00 GMT", now: now) == HTTPDate.parse("Tue, 01 Jan 1980 00:00:00 GMT"))
        #expect(HTTPDate.parse("Tuesday, 01-Jan-75 00:00:00 GMT", now: now) == HTTPDate.parse("Tue, 01 Jan 2075 00:00:00 GMT"))
        #expect(HTTPDate.parse("Monday, 01-Jan-30 00:00:00 GMT", now: now) == HTTPDate.parse("Tue, 01 Jan 2030 00:00:00 GMT"))
    }

    @Test(arguments: ["", "0", "-1", "tomorrow", "Sun, 06 Nov 1994 08:49:37 PST", "Sun, 06 Nov 1994 25:49:37 GMT",
                      "Sun, 31 Nov 1994 08:49:37 GMT", "Sun, 06 Foo 1994 08:49:37 GMT", "Sun, 06 Nov 94 08:49:37 GMT",
                      "Sun, 06 Nov 1994 8:49:37 GMT"])
    func anythingElseIsNotADate(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    /// Each deviation from the three grammars of RFC 9110 section 5.6.7 is no date at all.
    @Test(arguments: [
        "Sun 06 Nov 1994 08:49:37 GMT",            // IMF-fixdate without its comma
        "Sun,  06 Nov 1994 08:49:37 GMT",          // an extra space
        "Sun, 06  Nov 1994 08:49:37 GMT",
        "Sun, 06 Nov 1994 08:49:37  GMT",
        " Sun, 06 Nov 1994 08:49:37 GMT",          // leading and trailing spaces
        "Sun, 06 Nov 1994 08:49:37 GMT ",
        "Sun, 06 Nov 1994 08:49:37 UTC",           // another time zone
        "Sun, 06 Nov 1994 08:49:37 +0000",
        "Sun, 06 Nov 1994 08:49:37",               // none
        "Sun, 6 Nov 1994 08:49:37 GMT",            // one-digit day
        "Sun,\t06 Nov 1994 08:49:37 GMT",          // a tab for a space
        "Sunday, 06 Nov 1994 08:49:37 GMT",        // a long day name in IMF-fixdate
        "Sun, 06-Nov-94 08:49:37 GMT",             // a short day name in RFC 850
        "Sunday 06-Nov-94 08:49:37 GMT",           // RFC 850 without its comma
        "Sunday, 06-Nov-1994 08:49:37 GMT",
        "Sun Nov 6 08:49:37 1994",                 // asctime's day needs two characters
        "Sun Nov  6 08:49:37 1994 GMT",
        "Sun, Nov  6 08:49:37 1994",
        "Foo, 06 Nov 1994 08:49:37 GMT",           // no such day
    ])
    func aDateThatDeviatesFromTheGrammarIsNotADate(text: String) {
        #expect(HTTPDate.parse(text, now: example) == nil)
    }

    @Test func dayMonthAndTimeZoneParseInAnyLetterCase() {
        #expect(HTTPDate.parse("sun, 06 nov 1994 08:49:37 gmt") == example)
        #expect(HTTPDate.parse("SUN, 06 NOV 1994 08:49:37 Gmt") == example)
        #expect(HTTPDate.parse("SUNDAY, 06-nOv-94 08:49:37 gmt", now: Date(timeIntervalSince1970: 800_000_000)) == example)
        #expect(HTTPDate.parse("sUn NOV  6 08:49:37 1994") == example)
        #expect(HTTPDate.parse("Sun Nov 06 08:49:37 1994") == example)
    }
}
