import Foundation

/// The value generators of WORKLOADS.md. Both draw from the caller's stream,
/// so the number of draws each makes is part of the specification: the next
/// generator (or the next operation) continues where this one stopped.
///
/// ```swift
/// var rng = SplitMix64(seed: 42)
/// let text = WorkloadValues.text(index: 0, byteCount: 1024, using: &rng)
/// let blob = WorkloadValues.blob(byteCount: 256 * 1024, using: &rng)
/// ```
public enum WorkloadValues {
    /// A compressible value of `byteCount` bytes for key `index`, like an API response:
    /// `{"id":I,"name":"user-I","active":true,"score":R,"tags":["a","b","c"]},`
    /// repeated and cut at `byteCount` bytes.
    ///
    /// Draws one value (R = `next() % 1000`) for every repetition begun,
    /// including a last one that the cut shortens, even to before R.
    /// The 1 KiB value of index 0 from seed 42 (the vector) makes 15 draws.
    /// - Complexity: O(byteCount).
    public static func text(index: Int, byteCount: Int, using rng: inout SplitMix64) -> Data {
        precondition(byteCount >= 0, "a value has a non-negative size")
        let head = Array(#"{"id":\#(index),"name":"user-\#(index)","active":true,"score":"#.utf8)
        let tail = Array(#","tags":["a","b","c"]},"#.utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(byteCount + head.count + tail.count + 3)
        while bytes.count < byteCount {
            let score = rng.next() % 1000
            bytes += head
            bytes += String(score).utf8
            bytes += tail
        }
        return Data(bytes.prefix(byteCount))
    }

    /// An incompressible value of `byteCount` bytes, like an image: the
    /// successive little-endian bytes of the stream's values.
    ///
    /// Draws `ceil(byteCount / 8)` values; the unused high bytes of a last,
    /// partly used value are dropped.
    /// - Complexity: O(byteCount).
    public static func blob(byteCount: Int, using rng: inout SplitMix64) -> Data {
        precondition(byteCount >= 0, "a value has a non-negative size")
        var data = Data(count: byteCount)
        data.withUnsafeMutableBytes { bytes in
            var offset = 0
            while offset + 8 <= byteCount {
                bytes.storeBytes(of: rng.next().littleEndian, toByteOffset: offset, as: UInt64.self)
                offset += 8
            }
            if offset < byteCount {
                let last = rng.next()
                for shift in 0..<(byteCount - offset) {
                    bytes[offset + shift] = UInt8(truncatingIfNeeded: last >> (8 * shift))
                }
            }
        }
        return data
    }
}
