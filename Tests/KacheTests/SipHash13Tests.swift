@testable import Kache
import Testing

/// The index's key hash is SipHash-1-3: checked against CPython's `hash` of
/// bytes, which is SipHash-1-3 too (`sys.hash_info.algorithm`), with the
/// all-zero key that `PYTHONHASHSEED=0` gives it. The expected values come from
/// `PYTHONHASHSEED=0 python3 -c 'print(hash(b"key-0000001" + b"\x01\x02"))'`
/// (Python 3.11), one for each length that takes another path through the
/// tail: bytes one by one under 8, the last eight in one load from 9 on.
@Suite struct SipHash13Tests {
    @Test(arguments: [
        ("", 2_119_833_762_097_967_943),
        ("a", 7_813_828_981_309_234_506),
        ("abcdef", 1_996_360_936_666_963_582),
        ("abcdefg", 8_731_586_236_356_625_343),
        ("abcdefgh", -8_951_970_812_727_829_033),
        ("abcdefghi", -9_129_177_564_841_784_743),
        ("abcdefghij", -7_765_327_756_982_225_804),
        ("key-0000001", 6_295_764_736_943_663_609),
        ("key-000000012", -3_945_429_858_460_299_471),
        ("abcdefghijklmno", -5_825_095_552_051_259_105),
        ("abcdefghijklmnop", 7_763_398_035_636_546_182),
        ("abcdefghijklmnopqrstuvw", 7_696_812_060_157_319_756),
    ] as [(String, Int64)])
    func matchesCPythonsSipHash13(key: String, expected: Int64) {
        let zero = SipHash13(k0: 0, k1: 0)
        #expect(Int64(bitPattern: zero.hash(key, extra: 0x0201)) == expected)
    }

    @Test func bytesAreASCIIOnlyWhenEveryOneIsBelow128() {
        let zero = SipHash13(k0: 0, k1: 0)
        for length in 0 ..< 20 {
            let plain = [UInt8](repeating: 0x7F, count: length)
            #expect(plain.withUnsafeBytes { zero.hash($0, extra: 0).isASCII })
            for position in 0 ..< length {
                var high = plain
                high[position] = 0x80
                #expect(!high.withUnsafeBytes { zero.hash($0, extra: 0).isASCII }, "a byte of 0x80 at \(position) of \(length)")
            }
        }
    }

    @Test func theKeyAndTheExtraBytesEachChangeTheHash() {
        let zero = SipHash13(k0: 0, k1: 0)
        #expect(zero.hash("key", extra: 1) != zero.hash("key", extra: 2))
        #expect(zero.hash("key", extra: 1) != SipHash13(k0: 1, k1: 0).hash("key", extra: 1))
        #expect(zero.hash("key", extra: 1) != SipHash13(k0: 0, k1: 1).hash("key", extra: 1))
        // A key in composed form hashes as its UTF-8 bytes do.
        #expect(zero.hash("naïve-key-0000001", extra: 7) == Array("naïve-key-0000001".utf8).withUnsafeBytes { zero.hash($0, extra: 7).hash })
    }

    /// Swift's `==` holds canonically equivalent strings equal, so they must hash alike.
    @Test(arguments: [
        ("\u{E9}t\u{E9}", "e\u{301}te\u{301}"),
        ("K", "\u{212A}"),
        ("a;b", "a\u{37E}b"),
        ("\u{1E69}", "s\u{323}\u{307}"),
    ])
    func canonicallyEquivalentKeysHashAlike(composed: String, other: String) {
        #expect(composed == other)
        #expect(SipHash13.process.hash(composed, extra: 3) == SipHash13.process.hash(other, extra: 3))
    }
}
