import Foundation
import KacheStorage
import Testing

@Suite struct BinaryReaderTests {
    /// Values at every length boundary of the encoding (one, two, three and
    /// ten bytes) come back, each followed by a byte the read must not take:
    /// the inline one- and two-byte paths and the loop agree.
    @Test func varintsOfEveryLengthRoundTrip() throws {
        var values: [UInt64] = [0, 1, 127, 128, 129, 255, 256, 16_383, 16_384, 2_097_151, 2_097_152, UInt64.max]
        for bits in 0 ..< 64 { values.append(1 << bits) }
        for value in values {
            var bytes: [UInt8] = []
            bytes.appendVarint(value)
            bytes.append(0x55)
            let (read, left) = try Self.readVarint(bytes)
            #expect(read == value)
            #expect(left == [0x55], "\(value)")
        }
    }

    /// A varint whose continuation bit runs past the end throws, at one, two and three bytes.
    @Test func aVarintCutOffAtTheEndThrows() {
        for cut in [[0x80], [0xFF, 0x80], [0x80, 0x80, 0x80]] as [[UInt8]] {
            #expect(throws: BinaryReader.Truncated.self, "\(cut)") { try Self.readVarint(cut) }
        }
    }

    /// More than 64 bits (an eleventh byte, or a tenth above 1) is damage, not a wrap.
    @Test func aVarintPastSixtyFourBitsThrows() {
        for bytes in [Array(repeating: 0xFF, count: 10) + [0x01], Array(repeating: 0xFF, count: 9) + [0x02]] as [[UInt8]] {
            #expect(throws: BinaryReader.Truncated.self, "\(bytes)") { try Self.readVarint(bytes) }
        }
    }

    /// A column of varints reads as the varints one by one: all of one byte
    /// (the fast path), mixed lengths (a value of 128 or more among them), a
    /// column cut short, and a column that ends exactly where the bytes do;
    /// the byte after a column is left.
    @Test func aColumnOfVarintsReadsAsTheVarintsOneByOne() throws {
        let columns: [[UInt64]] = [
            Array(0 ..< 127), [5, 0, 9, 127, 1], [1, 2, 200, 3], [16_384, 7], [300] + Array(repeating: 1, count: 40), [],
        ]
        for column in columns {
            var bytes: [UInt8] = []
            for value in column { bytes.appendVarint(value) }
            for trailing in [false, true] {
                let input = bytes + (trailing ? [0x55] : [])
                let (read, left) = try input.withUnsafeBytes { raw in
                    var reader = BinaryReader(raw)
                    var read: [UInt64] = []
                    try reader.forEachVarint(column.count) { index, value in
                        #expect(index == read.count)
                        read.append(value)
                    }
                    return (read, raw.count - reader.offset)
                }
                #expect(read == column)
                #expect(left == (trailing ? 1 : 0), "\(column)")
            }
        }
        // Asked for more varints than the bytes hold: a throw, at one byte each and at two.
        for bytes in [[1, 2, 3], [0x81, 0x01, 0x82]] as [[UInt8]] {
            #expect(throws: BinaryReader.Truncated.self, "\(bytes)") {
                try bytes.withUnsafeBytes { raw in
                    var reader = BinaryReader(raw)
                    try reader.forEachVarint(4) { _, _ in }
                }
            }
        }
    }

    /// Every length from 0 to 40 (one load or two, overlapping, or a loop of
    /// loads): no byte above 0x7F, and one at each position in turn.
    @Test func aByteAbove0x7FIsSeenAtEveryPositionOfEveryLength() {
        for count in 0 ... 40 {
            let low = [UInt8](repeating: 0x7F, count: count)
            #expect(low.withUnsafeBytes { BinaryReader.isBelow0x80($0) }, "\(count)")
            for position in 0 ..< count {
                var bytes = low
                bytes[position] = 0x80
                #expect(!bytes.withUnsafeBytes { BinaryReader.isBelow0x80($0) }, "count \(count), position \(position)")
            }
        }
    }

    /// The varint at the start of `bytes`, and the bytes after it.
    private static func readVarint(_ bytes: [UInt8]) throws -> (UInt64, left: [UInt8]) {
        try bytes.withUnsafeBytes { raw in
            var reader = BinaryReader(raw)
            let value = try reader.readVarint()
            return (value, Array(bytes[reader.offset...]))
        }
    }
}
