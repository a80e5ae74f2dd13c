import ArgumentParser

/// A size on the command line: `500M`, `2G`, `64K`, or plain bytes (`1048576`).
/// K, M, G and T are powers of 1,024 (a trailing `B` or `iB` is allowed: `500MiB`).
enum ByteSizeArgument {
    /// The help text of an option that takes one.
    static let format = "as 500M, 2G, 64K or plain bytes (K, M, G, T are powers of 1,024)"

    private static let units: [Character: Int] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]

    /// Parses `text`, or throws a message that says what is accepted.
    static func parse(_ text: String) throws -> Int {
        var digits = Substring(text.uppercased())
        for suffix in ["IB", "B"] where digits.hasSuffix(suffix) && digits.count > suffix.count {
            digits = digits.dropLast(suffix.count)
            break
        }
        var multiplier = 1
        if let last = digits.last, let unit = units[last] {
            multiplier = unit
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int(digits) else {
            throw ValidationError("a size is a whole number of bytes, or one followed by K, M, G or T (64K, 500M, 2G)")
        }
        guard count > 0 else { throw ValidationError("a size must be more than zero") }
        let (bytes, overflow) = count.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { throw ValidationError("\(text) is too large a size") }
        return bytes
    }
}
