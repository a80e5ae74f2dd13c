/// SipHash-1-3 (Aumasson and Bernstein; the variant Swift's `Hasher` and
/// Python's `str` hash use) over one contiguous run of bytes, keyed at
/// random once per process: the hash of every key the index looks up.
///
/// Why by hand: `Hasher` is the same function, but it takes its input through
/// a streaming buffer, a few bytes at a time. One-shot over a key's UTF-8,
/// the same rounds cost about half as much (W8's million 11-byte keys, best
/// of 5 in a loop: 63 → 27 ms), and every get, set and open hashes its keys. A keyed hash rather than a faster unkeyed
/// one (XXH64, as the format's checksums use), because keys may come from
/// whoever sends requests (a gateway caches by URL): without the key, no one
/// can pick keys that pile into one run of the table.
struct SipHash13 {
    private let k0: UInt64
    private let k1: UInt64

    init(k0: UInt64, k1: UInt64) {
        self.k0 = k0
        self.k1 = k1
    }

    /// The process's key, drawn from the system's random source at first use.
    static let process = SipHash13(k0: .random(in: .min ... .max), k1: .random(in: .min ... .max))

    /// The hash of `bytes`, then `extra` as two more bytes (the key space).
    func hash(_ bytes: UnsafeRawBufferPointer, extra: UInt16) -> UInt64 {
        var state = State(k0: k0, k1: k1)
        let count = bytes.count
        var offset = 0
        while offset + 8 <= count {
            state.compress(bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian)
            offset += 8
        }
        // The last 0–7 bytes, then `extra`'s two: 2–9 bytes, so one or two words.
        var word: UInt64 = 0
        let rest = count - offset
        for index in 0 ..< rest { word |= UInt64(bytes[offset + index]) << UInt64(8 * index) }
        let extra = UInt64(extra)
        let lengthByte = UInt64(truncatingIfNeeded: count + 2) << 56
        switch rest {
        case ..<6:
            state.compress(word | extra << UInt64(8 * rest) | lengthByte)
        case 6:
            state.compress(word | extra << 48)
            state.compress(lengthByte)
        default:
            state.compress(word | extra << 56)
            state.compress(extra >> 8 | lengthByte)
        }
        return state.finalize()
    }

    /// The hash of `key`'s UTF-8, then `extra`.
    func hash(_ key: String, extra: UInt16) -> UInt64 {
        // Native and small strings (all on Linux) are contiguous; `withUTF8` makes any other so.
        if let hash = key.utf8.withContiguousStorageIfAvailable({ hash(UnsafeRawBufferPointer($0), extra: extra) }) { return hash }
        var copy = key
        return copy.withUTF8 { hash(UnsafeRawBufferPointer($0), extra: extra) }
    }

    private struct State {
        var v0: UInt64
        var v1: UInt64
        var v2: UInt64
        var v3: UInt64

        init(k0: UInt64, k1: UInt64) {
            v0 = k0 ^ 0x736f_6d65_7073_6575
            v1 = k1 ^ 0x646f_7261_6e64_6f6d
            v2 = k0 ^ 0x6c79_6765_6e65_7261
            v3 = k1 ^ 0x7465_6462_7974_6573
        }

        mutating func round() {
            v0 &+= v1; v1 = v1.rotated(13); v1 ^= v0; v0 = v0.rotated(32)
            v2 &+= v3; v3 = v3.rotated(16); v3 ^= v2
            v0 &+= v3; v3 = v3.rotated(21); v3 ^= v0
            v2 &+= v1; v1 = v1.rotated(17); v1 ^= v2; v2 = v2.rotated(32)
        }

        /// One word of input: 1 round (the "1" of 1-3).
        mutating func compress(_ word: UInt64) {
            v3 ^= word
            round()
            v0 ^= word
        }

        /// 3 rounds (the "3").
        mutating func finalize() -> UInt64 {
            v2 ^= 0xff
            round()
            round()
            round()
            return v0 ^ v1 ^ v2 ^ v3
        }
    }
}

private extension UInt64 {
    func rotated(_ bits: UInt64) -> UInt64 { self << bits | self >> (64 - bits) }
}
