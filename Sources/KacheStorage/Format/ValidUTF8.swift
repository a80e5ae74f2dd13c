extension String {
    /// The string the bytes spell, or nil when they are not valid UTF-8.
    ///
    /// Why not only `String(validating:as:)`: in Swift 6.3 it instantiates
    /// generic metadata on every call, a tenth of the time to decode a
    /// manifest of 100,000 keys. Keys are mostly ASCII, which needs no more
    /// check than its top bits; anything else goes through the standard one.
    /// Public for the reason `Locked` is.
    @inlinable
    public init?(validUTF8 bytes: UnsafeRawBufferPointer) {
        if !bytes.contains(where: { $0 >= 0x80 }) {
            self = String(decoding: bytes, as: UTF8.self)
        } else if let string = String(validating: bytes, as: UTF8.self) {
            self = string
        } else {
            return nil
        }
    }
}

extension String {
    /// Whether `bytes` are valid UTF-8, checked as `init?(validUTF8:)` checks
    /// them but with no string kept: an open checks every key it reads, and
    /// makes strings only of the ones it keeps.
    @inlinable
    public static func isValidUTF8(_ bytes: UnsafeRawBufferPointer) -> Bool {
        !bytes.contains(where: { $0 >= 0x80 }) || String(validating: bytes, as: UTF8.self) != nil
    }
}
