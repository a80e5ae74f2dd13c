/// Nanoseconds since 1970-01-01T00:00:00Z: the unit of every stored expiry.
/// `Int64` reaches the year 2262; larger expiries saturate (they never expire).
package typealias Timestamp = Int64
