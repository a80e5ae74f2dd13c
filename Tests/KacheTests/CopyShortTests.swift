import KacheStorage
import Testing

@Suite struct CopyShortTests {
    /// Every length from 0 to 40 (the inline cases up to 16, `memmove` past
    /// them), at every offset within a word: exactly the bytes asked for are
    /// copied, and none around them is touched.
    @Test func copiesExactlyTheBytesAskedFor() {
        let source = (0 ..< 64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        for count in 0 ... 40 {
            for offset in 0 ..< 8 {
                var target = [UInt8](repeating: 0xEE, count: 64)
                target.withUnsafeMutableBytes { target in
                    source.withUnsafeBytes { source in
                        (target.baseAddress! + offset).copyShort(from: source.baseAddress! + 3, count: count)
                    }
                }
                let expected = Array(repeating: 0xEE, count: offset) + source[3 ..< 3 + count]
                    + Array(repeating: 0xEE, count: 64 - offset - count)
                #expect(target == expected, "count \(count), offset \(offset)")
            }
        }
    }
}
