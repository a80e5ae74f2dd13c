/// The Redis Cluster hash slot of a key: CRC16 (XMODEM) of the key, or of its
/// `{hash tag}` when it has a non-empty one, modulo 16384.
///
/// Keys sharing a tag share a slot, so one node holds them all and a script
/// may touch them together: `{pool:avatars}:order` and `{pool:avatars}:values`.
///
/// ```swift
/// HashSlot(key: "123456789").value          // 12739 (CRC16 0x31C3)
/// HashSlot(key: "{user1}.following") == HashSlot(key: "{user1}.followers")   // true
/// ```
public struct HashSlot: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number of slots in a cluster.
    public static let count = 16_384

    /// The slot, 0 ..< 16384.
    public let value: Int

    /// The slot `value`, which must be below ``count``.
    public init(_ value: Int) {
        precondition((0..<Self.count).contains(value), "slot \(value) is outside 0..<16384")
        self.value = value
    }

    /// The slot of `key`, given as UTF-8 text.
    public init(key: String) {
        var key = key
        value = key.withUTF8 { Self.slot(of: UnsafeRawBufferPointer($0)) }
    }

    /// The slot of `key`, given as bytes.
    public init(keyBytes: some Collection<UInt8>) {
        value = Array(keyBytes).withUnsafeBytes { Self.slot(of: $0) }
    }

    init(argument: RESPArgument) {
        value = argument.withBytes { Self.slot(of: $0) }
    }

    /// Slots order by number.
    public static func < (lhs: HashSlot, rhs: HashSlot) -> Bool { lhs.value < rhs.value }

    /// The slot number.
    public var description: String { String(value) }

    /// The part of `key` that is hashed: what lies between the first `{` and the
    /// first `}` after it, when that is non-empty; otherwise the whole key.
    static func hashedRange(of key: UnsafeRawBufferPointer) -> Range<Int> {
        guard let open = key.firstIndex(of: UInt8(ascii: "{")),
              let close = key[(open + 1)...].firstIndex(of: UInt8(ascii: "}")),
              close > open + 1
        else { return 0..<key.count }
        return (open + 1)..<close
    }

    static func slot(of key: UnsafeRawBufferPointer) -> Int {
        Int(CRC16.checksum(UnsafeRawBufferPointer(rebasing: key[hashedRange(of: key)])) & 0x3FFF)
    }
}

/// CRC-16/XMODEM (polynomial 0x1021, initial value 0, no reflection), the
/// checksum Redis Cluster hashes keys with. Check value: "123456789" → 0x31C3.
public enum CRC16 {
    static let table: [UInt16] = (0..<256).map { byte in
        var crc = UInt16(byte) << 8
        for _ in 0..<8 {
            crc = crc & 0x8000 != 0 ? (crc << 1) ^ 0x1021 : crc << 1
        }
        return crc
    }

    /// The checksum of `bytes`.
    /// - Complexity: O(n), one table lookup a byte.
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt16 {
        var crc: UInt16 = 0
        table.withUnsafeBufferPointer { table in
            for byte in bytes {
                crc = (crc << 8) ^ table[Int(UInt8(truncatingIfNeeded: crc >> 8) ^ byte)]
            }
        }
        return crc
    }

    /// The checksum of `bytes`.
    public static func checksum(_ bytes: some Collection<UInt8>) -> UInt16 {
        Array(bytes).withUnsafeBytes { checksum($0) }
    }
}
