import Foundation

/// Parses the three date formats HTTP allows (RFC 9110 section 5.6.7):
/// `Sun, 06 Nov 1994 08:49:37 GMT` (IMF-fixdate, what servers send),
/// `Sunday, 06-Nov-94 08:49:37 GMT` (RFC 850) and `Sun Nov  6 08:49:37 1994` (asctime).
///
/// Hand-written rather than a `DateFormatter`: the grammar is fixed, in English,
/// always UTC, and a formatter's locale and time zone settings can only get in the way.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]

    /// The instant `text` names, or nil when it is not an HTTP date.
    /// `now` resolves the two-digit years of RFC 850 (a year more than 50
    /// years in the future is taken to be in the past century).
    static func parse(_ text: String, now: Date = Date()) -> Date? {
        let tokens = text.split { $0 == " " || $0 == "," || $0 == "\t" }.map(String.init)
        switch tokens.count {
        case 6 where tokens[5] == "GMT":
            // IMF-fixdate: day-name, DD Mon YYYY HH:MM:SS GMT
            return date(day: tokens[1], month: tokens[2], year: tokens[3], time: tokens[4], yearDigits: 4)
        case 4 where tokens[3] == "GMT":
            // RFC 850: day-name, DD-Mon-YY HH:MM:SS GMT
            let parts = tokens[1].split(separator: "-", omittingEmptySubsequences: false).map(String.init)
            guard parts.count == 3, parts[2].count == 2, let yy = Int(parts[2]) else { return nil }
            let currentYear = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: now).year ?? 2000
            var year = currentYear - currentYear % 100 + yy
            if year > currentYear + 50 { year -= 100 }
            return date(day: parts[0], month: parts[1], year: String(year), time: tokens[2], yearDigits: 4)
        case 5:
            // asctime: day-name Mon D HH:MM:SS YYYY
            return date(day: tokens[2], month: tokens[1], year: tokens[4], time: tokens[3], yearDigits: 4)
        default:
            return nil
        }
    }

    private static func date(day: String, month: String, year: String, time: String, yearDigits: Int) -> Date? {
        guard (1 ... 2).contains(day.count), let d = digits(day),
              let m = months.firstIndex(of: month.lowercased()).map({ $0 + 1 }),
              year.count == yearDigits, let y = digits(year)
        else { return nil }
        let clock = time.split(separator: ":", omittingEmptySubsequences: false)
        guard clock.count == 3, clock.allSatisfy({ $0.count == 2 }),
              let hh = digits(String(clock[0])), let mm = digits(String(clock[1])), let ss = digits(String(clock[2])),
              hh < 24, mm < 60, ss <= 60, d >= 1, d <= daysIn(month: m, year: y)
        else { return nil }
        let days = daysSinceEpoch(year: y, month: m, day: d)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + hh * 3600 + mm * 60 + ss))
    }

    private static func digits(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.allSatisfy({ (0x30 ... 0x39).contains($0) }) else { return nil }
        return Int(text)
    }

    private static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }

    /// Days from 1970-01-01 to the given proleptic Gregorian date
    /// (the era-based conversion: 400-year eras of 146,097 days).
    private static func daysSinceEpoch(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
    }
}
