import ArgumentParser

/// A size on the command line: `500M`, `2G`, `64K`, or plain bytes (`1048576`).
/// K, M, G and T are powers of 1,024 (a trailing `B` or `iB` is allowed: `500MiB`).
enum ByteSizeArgument {
    /// The help text of an option that takes one.
    static let format = "as 500M, 2G, 64K or plain bytes (K, M, G, T are powers of 1,024)"

    private static let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]

    /// Parses `text`, or throws a message that says what is accepted.
    static func parse(_ text: String) throws -> Int {
        var upper = Substring(text.uppercased())
        for suffix in ["IB", "B"] where upper.hasSuffix(suffix) && upper.count > suffix.count {
            upper = upper.dropLast(suffix.count)
            break
        }
        do {
            return Int(try UnitSuffix.parse(upper, units: units))
        } catch .malformed {
            throw ValidationError("a size is a whole number of bytes, or one followed by K, M, G or T (64K, 500M, 2G)")
        } catch .zero {
            throw ValidationError("a size must be more than zero")
        } catch .overflow {
            throw ValidationError("\(text) is too large a size")
        }
    }
}
