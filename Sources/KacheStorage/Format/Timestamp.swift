import Foundation

/// Nanoseconds since 1970-01-01T00:00:00Z: the unit of every stored expiry.
/// `Int64` reaches the year 2262; larger expiries saturate (they never expire).
package typealias Timestamp = Int64

extension Timestamp {
    /// `date`, saturating at the ends of the range.
    package init(_ date: Date) {
        let nanos = date.timeIntervalSince1970 * 1e9
        if nanos >= 9.2e18 { self = .max } else if nanos <= -9.2e18 { self = .min } else { self = Int64(nanos) }
    }
}
