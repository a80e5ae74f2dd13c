import Foundation
import KacheStorage
import Testing

/// `GatheredBlocks`: the small records the `async` writer holds back until
/// they fill a block. Writes leave it whole blocks at a time, in the order
/// they came, and none is lost or handed out twice.
@Suite struct GatheredBlocksTests {
    private static let bucket = SegmentStore.Bucket(shift: 4, index: 7)
    private static let otherBucket = SegmentStore.Bucket(shift: 4, index: 8)

    /// A write of a 200-byte value, W8's size: about 40 fill a block.
    private static func write(_ number: Int, bucket: SegmentStore.Bucket = bucket) -> RecordWrite {
        RecordWrite(
            version: RecordVersion(space: 0, key: "key-\(number)", sequence: UInt64(number)), canonicalKey: nil, space: "", kind: 0,
            expiry: 1, value: Data(count: 200), bucket: bucket
        )
    }

    private static func sequences(_ writes: [RecordWrite]) -> [UInt64] { writes.map(\.version.sequence) }

    /// Writes come a few at a time, as the writer's batches bring them; each
    /// call must hand out exactly the blocks its writes completed, and what
    /// it keeps must still be there for the next call.
    @Test func writesLeaveInWholeBlocksInTheOrderTheyCame() {
        let held = QueuedBytes()
        let gathered = GatheredBlocks(held: held)
        let weight = Self.write(0).weight
        var perBlock = 0
        while SegmentBlock.Builder.fits(weight: weight, after: perBlock * weight, count: perBlock) { perBlock += 1 }
        #expect(perBlock > 3, "the test needs blocks of several records")

        var handedOut: [UInt64] = []
        var next = 0
        for size in [1, 2, 3, 1, 5, 2, 7, 1, 1, 4, 3, 9, 2] + Array(repeating: 3, count: 40) {
            let ready = gathered.gather((next ..< next + size).map { Self.write($0) }, bucket: Self.bucket)
            next += size
            handedOut += Self.sequences(ready)
            #expect(ready.count % perBlock == 0, "a call handed out part of a block: \(ready.count) writes")
            #expect(gathered.count == next - handedOut.count)
        }
        #expect(handedOut == (0 ..< UInt64(handedOut.count)).map { $0 }, "writes left out of order, or twice")
        #expect(!handedOut.isEmpty && gathered.count > 0 && gathered.count <= perBlock)

        let rest = gathered.takeOverdue(all: true)
        #expect(Self.sequences(rest[Self.bucket] ?? []) == (UInt64(handedOut.count) ..< UInt64(next)).map { $0 })
        #expect(gathered.count == 0 && gathered.nextDeadline == nil)
    }

    /// Each bucket fills its own block: writes of another bucket neither
    /// fill it nor leave with it.
    @Test func bucketsFillTheirBlocksApart() {
        let gathered = GatheredBlocks(held: QueuedBytes())
        #expect(gathered.gather([Self.write(1)], bucket: Self.bucket).isEmpty)
        #expect(gathered.gather([Self.write(2, bucket: Self.otherBucket)], bucket: Self.otherBucket).isEmpty)
        #expect(gathered.gather([Self.write(3)], bucket: Self.bucket).isEmpty)
        #expect(gathered.count == 3)
        let overdue = gathered.takeOverdue(all: true)
        #expect(Self.sequences(overdue[Self.bucket] ?? []) == [1, 3])
        #expect(Self.sequences(overdue[Self.otherBucket] ?? []) == [2])
    }

    /// What waits counts against the memory budget; what leaves is the
    /// writer's to release once written.
    @Test func heldBytesCountWhatWaits() {
        let held = QueuedBytes()
        let gathered = GatheredBlocks(held: held)
        let writes = (0 ..< 3).map { Self.write($0) }
        _ = gathered.gather(writes, bucket: Self.bucket)
        #expect(held.current == writes.reduce(0) { $0 + QueuedBytes.held(by: $1) })
        let taken = gathered.takeOverdue(all: true).values.flatMap { $0 }
        #expect(held.current > 0, "taken writes stay counted until released")
        gathered.release(taken)
        #expect(held.current == 0)
    }
}
