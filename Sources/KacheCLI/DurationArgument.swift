import ArgumentParser

/// A time to live on the command line: `90s`, `15m`, `1h`, `7d`, or plain seconds (`3600`).
enum DurationArgument {
    /// The help text of an option that takes one.
    static let format = "as 90s, 15m, 1h, 7d or plain seconds"

    private static let units: [Character: Int64] = ["s": 1, "m": 60, "h": 3600, "d": 86400]

    /// Parses `text`, or throws a message that says what is accepted.
    static func parse(_ text: String) throws -> Duration {
        do {
            return .seconds(try UnitSuffix.parse(Substring(text), units: units))
        } catch .malformed {
            throw ValidationError("a duration is a whole number of seconds, or one followed by s, m, h or d (90s, 15m, 1h, 7d)")
        } catch .zero {
            throw ValidationError("a time to live must be longer than zero")
        } catch .overflow {
            throw ValidationError("\(text) is too long a duration")
        }
    }
}
