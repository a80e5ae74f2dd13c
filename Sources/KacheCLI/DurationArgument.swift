import ArgumentParser

/// A time to live on the command line: `90s`, `15m`, `1h`, `7d`, or plain seconds (`3600`).
enum DurationArgument {
    /// The help text of an option that takes one.
    static let format = "as 90s, 15m, 1h, 7d or plain seconds"

    private static let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86400]

    /// Parses `text`, or throws a message that says what is accepted.
    static func parse(_ text: String) throws -> Duration {
        var digits = Substring(text)
        var multiplier: Int64 = 1
        if let last = digits.last, let unit = units[last] {
            multiplier = unit
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int64(digits) else {
            throw ValidationError("a duration is a whole number of seconds, or one followed by s, m, h or d (90s, 15m, 1h, 7d)")
        }
        guard count > 0 else { throw ValidationError("a time to live must be longer than zero") }
        let (seconds, overflow) = count.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { throw ValidationError("\(text) is too long a duration") }
        return .seconds(seconds)
    }
}
