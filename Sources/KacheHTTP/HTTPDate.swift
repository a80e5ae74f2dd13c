import Foundation

/// Parses the three date formats HTTP allows (RFC 9110 section 5.6.7), exactly:
///
/// ```
/// Sun, 06 Nov 1994 08:49:37 GMT     IMF-fixdate, what servers send
/// Sunday, 06-Nov-94 08:49:37 GMT    RFC 850 (obsolete)
/// Sun Nov  6 08:49:37 1994          asctime (obsolete)
/// ```
///
/// Anything else is no date: a missing comma, an extra or missing space, a tab,
/// another time zone, a one-digit day where two are required. That matters for
/// `Expires`, where an invalid value means "already expired" rather than a guess.
/// Day names, month names and `GMT` match in any letter case.
///
/// Hand-written rather than a `DateFormatter`: the grammar is fixed, in English,
/// always UTC, and a formatter's leniency is what this must not have.
enum HTTPDate {
    private static let months = ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"]
    private static let shortDays = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"]
    private static let longDays = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]

    /// The instant `text` names, or nil when it is not an HTTP date.
    /// `now` resolves the two-digit years of RFC 850 (a year more than 50
    /// years in the future is taken to be in the past century).
    static func parse(_ text: String, now: Date = Date()) -> Date? {
        var scanner = Scanner(Array(text.utf8))
        let name = scanner.letters()
        if scanner.take(",") {
            guard scanner.take(" ") else { return nil }
            if shortDays.contains(name) { return imfFixdate(&scanner) }
            if longDays.contains(name) { return rfc850(&scanner, now: now) }
            return nil
        }
        guard shortDays.contains(name), scanner.take(" ") else { return nil }
        return asctime(&scanner)
    }

    /// `DD Mon YYYY HH:MM:SS GMT`, after `day-name, `.
    private static func imfFixdate(_ scanner: inout Scanner) -> Date? {
        guard let day = scanner.digits(2), scanner.take(" "), let month = month(scanner.letters()), scanner.take(" "),
              let year = scanner.digits(4), scanner.take(" "), let time = time(&scanner), scanner.take(" "),
              scanner.letters() == "gmt", scanner.atEnd
        else { return nil }
        return date(year: year, month: month, day: day, time: time)
    }

    /// `DD-Mon-YY HH:MM:SS GMT`, after `day-name-l, `.
    private static func rfc850(_ scanner: inout Scanner, now: Date) -> Date? {
        guard let day = scanner.digits(2), scanner.take("-"), let month = month(scanner.letters()), scanner.take("-"),
              let yy = scanner.digits(2), scanner.take(" "), let time = time(&scanner), scanner.take(" "),
              scanner.letters() == "gmt", scanner.atEnd
        else { return nil }
        let currentYear = Calendar(identifier: .gregorian).dateComponents(in: TimeZone(identifier: "UTC")!, from: now).year ?? 2000
        var year = currentYear - currentYear % 100 + yy
        if year > currentYear + 50 { year -= 100 }
        return date(year: year, month: month, day: day, time: time)
    }

    /// `Mon DD HH:MM:SS YYYY` (the day as two digits, or a space and one digit), after `day-name `.
    private static func asctime(_ scanner: inout Scanner) -> Date? {
        guard let month = month(scanner.letters()), scanner.take(" ") else { return nil }
        let day = scanner.take(" ") ? scanner.digits(1) : scanner.digits(2)
        guard let day, scanner.take(" "), let time = time(&scanner), scanner.take(" "),
              let year = scanner.digits(4), scanner.atEnd
        else { return nil }
        return date(year: year, month: month, day: day, time: time)
    }

    private static func month(_ name: String) -> Int? {
        months.firstIndex(of: name).map { $0 + 1 }
    }

    /// `HH:MM:SS`, in seconds since midnight (a leap second, 60, is allowed).
    private static func time(_ scanner: inout Scanner) -> Int? {
        guard let hh = scanner.digits(2), scanner.take(":"), let mm = scanner.digits(2), scanner.take(":"),
              let ss = scanner.digits(2), hh < 24, mm < 60, ss <= 60
        else { return nil }
        return hh * 3600 + mm * 60 + ss
    }

    private static func date(year: Int, month: Int, day: Int, time: Int) -> Date? {
        guard day >= 1, day <= daysIn(month: month, year: year) else { return nil }
        let days = daysSinceEpoch(year: year, month: month, day: day)
        return Date(timeIntervalSince1970: TimeInterval(days * 86_400 + time))
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

    /// Reads a date's bytes from left to right; every step either consumes
    /// what it expects or leaves the position where it was.
    private struct Scanner {
        let bytes: [UInt8]
        var position = 0

        init(_ bytes: [UInt8]) {
            self.bytes = bytes
        }

        var atEnd: Bool { position == bytes.count }

        /// Consumes `character` if it comes next.
        mutating func take(_ character: Unicode.Scalar) -> Bool {
            guard position < bytes.count, bytes[position] == UInt8(ascii: character) else { return false }
            position += 1
            return true
        }

        /// Consumes a run of ASCII letters and returns it lowercased (empty when none).
        mutating func letters() -> String {
            let start = position
            while position < bytes.count, (0x41 ... 0x5A).contains(bytes[position] & ~0x20) { position += 1 }
            return String(decoding: bytes[start ..< position], as: UTF8.self).lowercased()
        }

        /// Consumes exactly `count` ASCII digits, or nothing.
        mutating func digits(_ count: Int) -> Int? {
            guard position + count <= bytes.count else { return nil }
            let run = bytes[position ..< position + count]
            guard run.allSatisfy({ (0x30 ... 0x39).contains($0) }) else { return nil }
            position += count
            return run.reduce(0) { $0 * 10 + Int($1 - 0x30) }
        }
    }
}
