import KacheStorage
import Testing

@Suite struct ValidUTF8Tests {
    func decoded(_ bytes: [UInt8]) -> String? {
        bytes.withUnsafeBytes { String(validUTF8: $0) }
    }

    @Test func validBytesDecode() {
        #expect(decoded(Array("user/42".utf8)) == "user/42")
        #expect(decoded(Array("é🙂日本".utf8)) == "é🙂日本")
        #expect(decoded([]) == "")
    }

    /// Each kind of invalid UTF-8, including a truncated 4-byte sequence of
    /// 3 bytes, which one 3-byte U+FFFD replaces: same length, other bytes.
    @Test func invalidBytesAreRejected() {
        let invalid: [[UInt8]] = [
            [0xFF], [0x80], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80],
            [0xF0, 0x90, 0x80], [0xF0, 0x90, 0x80, 0x41], [0xF4, 0x90, 0x80, 0x80], [0x41, 0xE2, 0x82],
        ]
        for bytes in invalid {
            #expect(decoded(bytes) == nil, "\(bytes) was accepted")
        }
    }

    /// Agrees with the standard library's validation on random short byte
    /// strings, drawn from lead, continuation and boundary bytes so that most
    /// are near-misses rather than noise.
    @Test func agreesWithStringValidating() {
        let alphabet: [UInt8] = [0x41, 0x7F, 0x80, 0x8F, 0x90, 0x9F, 0xA0, 0xBF, 0xC0, 0xC2, 0xDF, 0xE0, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF]
        var state: UInt64 = 42
        for _ in 0 ..< 20_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            let count = Int(state >> 61)
            let bytes = (0 ..< count).map { index in alphabet[Int((state >> (UInt64(index) * 5 + 20)) % UInt64(alphabet.count))] }
            let expected = bytes.withUnsafeBytes { String(validating: $0, as: UTF8.self) }
            #expect(decoded(bytes) == expected, "\(bytes)")
        }
    }
}
