/// Little-endian integers and LEB128 varints appended to bytes being
/// encoded: the writing side of `BinaryReader`, for blocks and hints.
extension [UInt8] {
    package mutating func appendInteger<T: FixedWidthInteger>(_ value: T) {
        Swift.withUnsafeBytes(of: value.littleEndian) { append(contentsOf: $0) }
    }

    /// LEB128: seven bits a byte, low bits first, the top bit set on all but the last.
    package mutating func appendVarint(_ value: UInt64) {
        var value = value
        while value >= 0x80 {
            append(UInt8(truncatingIfNeeded: value) | 0x80)
            value >>= 7
        }
        append(UInt8(value))
    }
}
