/// The grammar durations and sizes share on the command line: a positive whole
/// number, optionally followed by one unit letter that multiplies it.
enum UnitSuffix {
    enum Failure: Error {
        /// Not digits with an optional unit letter.
        case malformed
        case zero
        case overflow
    }

    /// The number `text` stands for, multiplied by its unit of `units`.
    static func parse(_ text: Substring, units: [Character: Int64]) throws(Failure) -> Int64 {
        var digits = text
        var multiplier: Int64 = 1
        if let last = digits.last, let unit = units[last] {
            multiplier = unit
            digits = digits.dropLast()
        }
        guard !digits.isEmpty, digits.allSatisfy({ $0.isASCII && $0.isNumber }), let count = Int64(digits) else {
            throw .malformed
        }
        guard count > 0 else { throw .zero }
        let (product, overflow) = count.multipliedReportingOverflow(by: multiplier)
        guard !overflow else { throw .overflow }
        return product
    }
}
