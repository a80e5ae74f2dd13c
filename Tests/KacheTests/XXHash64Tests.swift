import KacheStorage
import Testing
@testable import Kache

@Suite struct XXHash64Tests {
    // Reference values from the `xxhash` Python package (xxh64_intdigest), for
    // inputs that exercise every tail path and the 32-byte stripe loop.
    @Test(arguments: [
        ([UInt8](), UInt64(0), UInt64(0xEF46_DB37_51D8_E999)),
        (Array("a".utf8), 0, 0xD24E_C4F1_A98C_6E5B),
        (Array("abc".utf8), 0, 0x44BC_2CF5_AD77_0999),
        (Array((0 ..< 768).map { UInt8($0 % 256) }), 0, 0x8E03_C838_C596_036F),
        ([UInt8](), 0x4B41_4348, 0x5778_5BAC_A1A4_5C7F),
        (Array("abc".utf8), 0x4B41_4348, 0x8DB2_87A4_1417_A233),
        (Array((0 ..< 768).map { UInt8($0 % 256) }), 0x4B41_4348, 0xF114_B5A6_591F_1649),
    ])
    func matchesReference(input: [UInt8], seed: UInt64, expected: UInt64) {
        #expect(input.withUnsafeBytes { XXHash64.hash($0, seed: seed) } == expected)
    }
}
