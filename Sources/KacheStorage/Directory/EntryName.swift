import Foundation

/// Where an entry lives on disk: a file named from a 128-bit hash of its
/// key space and key, sharded into 256 folders.
///
/// No key can name a path (`../x`, `/`, NUL all become hex), and long keys are
/// fine because the file name never contains the key. The hash is taken over
/// the key's NFC form: Swift's `String` compares canonically equivalent
/// spellings (composed and decomposed `é`) as equal, so the dictionary in
/// memory and the file name on disk must agree on that too.
package struct EntryName: Hashable, Sendable {
    /// The key space's name (empty for the top level).
    package let space: String
    /// The key in canonical (NFC) form, as written into the file.
    package let canonicalKey: String
    /// Two seeded XXH64 halves of the 128-bit name hash.
    package let high: UInt64
    package let low: UInt64

    package init(space: String, key: String) {
        self.space = space
        self.canonicalKey = EntryName.canonical(key)
        var input = [UInt8]()
        input.reserveCapacity(space.utf8.count + canonicalKey.utf8.count + 2)
        withUnsafeBytes(of: UInt16(truncatingIfNeeded: space.utf8.count).littleEndian) { input.append(contentsOf: $0) }
        input.append(contentsOf: space.utf8)
        input.append(contentsOf: canonicalKey.utf8)
        (high, low) = input.withUnsafeBytes {
            (XXHash64.hash($0, seed: 0x4B41_4348_4531), XXHash64.hash($0, seed: 0x6E61_6D65_3231))
        }
    }

    /// The NFC form of `key`; ASCII is already canonical, so it skips Foundation.
    package static func canonical(_ key: String) -> String {
        canonical(ifNotASCII: key) ?? key
    }

    /// `canonical(key)`, or nil when that is `key` itself (an ASCII key).
    package static func canonical(ifNotASCII key: String) -> String? {
        isASCII(key) ? nil : key.precomposedStringWithCanonicalMapping
    }

    /// Whether every byte of `key` is below 0x80. A native string's bytes are
    /// checked a word at a time (`BinaryReader.isBelow0x80`); `utf8.allSatisfy`
    /// went byte by byte through the view's index checks, 400 instructions
    /// for a 20-byte key (W8).
    private static func isASCII(_ key: String) -> Bool {
        let contiguous = key.utf8.withContiguousStorageIfAvailable { BinaryReader.isBelow0x80(UnsafeRawBufferPointer($0)) }
        return contiguous ?? key.utf8.allSatisfy { $0 < 0x80 }
    }

    /// The shard folder: the first byte of the hash, two hex digits.
    package var shard: String { hex(high >> 56, digits: 2) }

    /// The file name: 32 hex digits.
    package var fileName: String { hex(high, digits: 16) + hex(low, digits: 16) }

    /// A small number used to pick the lock stripe that orders disk writes to this name.
    package var stripe: Int { Int(truncatingIfNeeded: low & 0xFFFF) }

    private func hex(_ value: UInt64, digits: Int) -> String {
        let s = String(value, radix: 16)
        return String(repeating: "0", count: digits - s.count) + s
    }
}
