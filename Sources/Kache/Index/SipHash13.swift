import CSipHash

/// SipHash-1-3 (Aumasson and Bernstein; the variant Swift's `Hasher` and
/// Python's `str` hash use) over one contiguous run of bytes, keyed at
/// random once per process: the hash of every key the index looks up.
///
/// Why not `Hasher`: it is the same function, but it takes its input through
/// a streaming buffer, a few bytes at a time. One-shot over a key's UTF-8
/// (`kache_siphash13`, in C: see its source), the same rounds cost a quarter
/// as much in a release build (W8's 11-byte keys, best of 3 in a loop: 64 →
/// 16 ns a key), and every get, set and open hashes its keys. A keyed hash
/// rather than a faster unkeyed one (XXH64, as the format's checksums use),
/// because keys may come from whoever sends requests (a gateway caches by
/// URL): without the key, no one can choose keys that pile into one run of
/// the table.
struct SipHash13: Sendable {
    private let k0: UInt64
    private let k1: UInt64

    init(k0: UInt64, k1: UInt64) {
        self.k0 = k0
        self.k1 = k1
    }

    /// The process's key, drawn from the system's random source at first use.
    static let process = SipHash13(k0: .random(in: .min ... .max), k1: .random(in: .min ... .max))

    /// The hash of `bytes`, then `extra` as two more bytes (the key space),
    /// and whether `bytes` are all ASCII.
    func hash(_ bytes: UnsafeRawBufferPointer, extra: UInt16) -> (hash: UInt64, isASCII: Bool) {
        var ascii: Int32 = 0
        let hash = kache_siphash13(bytes.baseAddress, bytes.count, extra, k0, k1, &ascii)
        return (hash, ascii != 0)
    }

    /// The hash of `key`'s UTF-8 in Unicode's composed form (NFC), then `extra`.
    ///
    /// Keys that Swift holds equal must hash alike, and Swift compares strings
    /// by canonical equivalence: "é" as one scalar or as "e" and a combining
    /// accent, "K" and the Kelvin sign. An ASCII key is its own composed form;
    /// any other is hashed again as `_nfcCodeUnits` gives it, the standard
    /// library's own normalization (the one its `==` and `Hasher` use; a
    /// second implementation, of another Unicode version, could disagree).
    func hash(_ key: String, extra: UInt16) -> UInt64 {
        let ascii = key.utf8.withContiguousStorageIfAvailable { bytes -> UInt64? in
            let (hash, isASCII) = hash(UnsafeRawBufferPointer(bytes), extra: extra)
            return isASCII ? hash : nil
        }
        if let ascii, let ascii { return ascii }
        return key._nfcCodeUnits.withUnsafeBytes { hash($0, extra: extra).hash }
    }

    /// The hash of `key`, whose UTF-8 is `utf8`, as `hash(_:extra:)` gives
    /// it: an open hashes a million keys from the bytes it read them from,
    /// and reaches for the string only when they are not ASCII.
    func hash(_ key: String, utf8: UnsafeRawBufferPointer, extra: UInt16) -> UInt64 {
        let (hash, isASCII) = hash(utf8, extra: extra)
        return isASCII ? hash : self.hash(key, extra: extra)
    }
}
