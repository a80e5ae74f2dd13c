import Foundation
import KacheStorage
import Testing

/// The fast encoder keeps its states and resets them between inputs: every
/// block it makes must still decode alone, whatever it compressed before, on
/// whichever thread.
@Suite struct LZ4Tests {
    /// Inputs that repeat one another, so that a state not reset would encode
    /// a later one as matches into an earlier one, which decoding alone can't follow.
    private static func input(_ index: Int) -> [UInt8] {
        let length = [200, 1024, 13, 4096, 64][index % 5]
        return (0..<length).map { UInt8(truncatingIfNeeded: ($0 % 61) &* 7 &+ index % 3) }
    }

    private static func roundTrip(_ source: [UInt8]) -> Bool {
        var packed = [UInt8](repeating: 0, count: source.count + source.count / 255 + 16)
        guard let length = source.withUnsafeBytes({ from in packed.withUnsafeMutableBytes { LZ4.compress(from, into: $0) } }) else {
            return false
        }
        var decoded = [UInt8](repeating: 0, count: source.count)
        let ok = packed.withUnsafeBytes { from in
            decoded.withUnsafeMutableBytes { LZ4.decompress(UnsafeRawBufferPointer(rebasing: from[..<length]), into: $0) }
        }
        return ok && decoded == source
    }

    @Test func blocksCompressedOneAfterAnotherEachDecodeAlone() {
        for index in 0..<50 {
            #expect(Self.roundTrip(Self.input(index)), "input \(index)")
        }
    }

    @Test func blocksCompressedOnManyThreadsAtOnceEachDecodeAlone() async {
        let failures = await withTaskGroup(of: Int.self) { group in
            for task in 0..<8 {
                group.addTask { (0..<200).filter { !Self.roundTrip(Self.input(task * 200 + $0)) }.count }
            }
            return await group.reduce(0, +)
        }
        #expect(failures == 0)
    }

    @Test func anInputThatWouldNotShrinkIntoItsRoomIsRefused() {
        let source = (0..<300).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) }
        var room = [UInt8](repeating: 0, count: 100)
        #expect(source.withUnsafeBytes { from in room.withUnsafeMutableBytes { LZ4.compress(from, into: $0) } } == nil)
    }
}
