/// The key names of WORKLOADS.md: `key-` and the index as 7 decimal digits.
///
/// ```swift
/// WorkloadKeys.key(42)          // "key-0000042"
/// let all = WorkloadKeys.keys(count: 100_000)
/// ```
public enum WorkloadKeys {
    /// The number of keys the 7-digit names can tell apart.
    public static let indexLimit = 10_000_000

    /// The name of key `index`, which must be in `0..<indexLimit`.
    ///
    /// Writes the digits directly rather than through `String(format:)`,
    /// because the read workloads name a key on every operation.
    /// - Complexity: O(1).
    public static func key(_ index: Int) -> String {
        precondition(index >= 0 && index < indexLimit, "key index \(index) is outside 0..<\(indexLimit)")
        return String(unsafeUninitializedCapacity: 11) { bytes in
            for (offset, byte) in "key-".utf8.enumerated() { bytes[offset] = byte }
            var rest = index
            for offset in stride(from: 10, through: 4, by: -1) {
                bytes[offset] = UInt8(ascii: "0") + UInt8(rest % 10)
                rest /= 10
            }
            return 11
        }
    }

    /// The names of keys `0..<count`, in index order.
    /// - Complexity: O(count).
    public static func keys(count: Int) -> [String] {
        (0..<count).map(key)
    }
}
