import Testing
@testable import Kache

@Suite struct ExpiryIndexTests {
    /// The reference of key `slot`'s version `sequence` (slots stand for keys here).
    private func ref(_ slot: Int, _ sequence: UInt64) -> EntryRef {
        EntryRef(shard: 0, slot: slot, sequence: sequence)
    }

    @Test func popsInExpiryThenWriteOrder() {
        var index = ExpiryIndex()
        index.insert(ref(3, 1), expiry: 30)
        index.insert(ref(1, 3), expiry: 10)
        index.insert(ref(2, 2), expiry: 10)
        index.insert(ref(4, 4), expiry: 20)
        var order: [Int] = []
        while let item = index.popEarliest(isLive: { _ in true }) { order.append(item.ref.slot) }
        #expect(order == [2, 1, 4, 3])
    }

    /// Write order survives the sequences' low 32 bits wrapping around.
    @Test func writeOrderAcrossTheWrapOfTheTag() {
        var index = ExpiryIndex()
        index.insert(ref(2, 1 << 32 + 5), expiry: 10) // tag 5, written after tag 0xFFFF_FFF0
        index.insert(ref(1, 1 << 32 - 16), expiry: 10)
        #expect(index.popEarliest(isLive: { _ in true })?.ref.slot == 1)
        #expect(index.popEarliest(isLive: { _ in true })?.ref.slot == 2)
    }

    @Test func staleItemsAreSkipped() {
        var index = ExpiryIndex()
        index.insert(ref(1, 1), expiry: 5)
        index.insert(ref(1, 2), expiry: 50) // overwrite: the first item is stale
        index.insert(ref(2, 3), expiry: 20)
        let live: [Int: UInt32] = [1: 2, 2: 3]
        let isLive = { (item: ExpiryIndex.Item) in live[item.ref.slot] == item.ref.tag }
        #expect(index.popEarliest(isLive: isLive)?.ref.slot == 2)
        #expect(index.popEarliest(isLive: isLive)?.expiry == 50)
        #expect(index.popEarliest(isLive: isLive) == nil)
    }

    /// A restore builds two heaps on two cores; their items still pop as
    /// one order, stale tops of either are skipped, and later inserts join it.
    @Test func restoredHalvesPopAsOneOrder() {
        var index = ExpiryIndex()
        let first = [item(1, 40), item(2, 10), item(3, 70)]
        let second = [item(4, 20), item(5, 60), item(6, 30), item(7, 50)]
        index.insert(halves: first, second)
        #expect(index.count == 7)
        #expect(index.leastExpiry == 10)
        index.insert(ref(8, 8), expiry: 35)
        let stale: Set<Int> = [2, 4] // the least item of each heap
        var order: [Int] = []
        while let item = index.popEarliest(isLive: { !stale.contains($0.ref.slot) }) { order.append(item.ref.slot) }
        #expect(order == [6, 8, 1, 7, 5, 3])
        #expect(index.count == 0)
    }

    /// Restored into heaps that hold items already, the halves join them.
    @Test func restoredHalvesJoinItemsThere() {
        var index = ExpiryIndex()
        index.insert(ref(1, 1), expiry: 25)
        index.insert(halves: [item(2, 5)], [item(3, 15), item(4, 35)])
        var order: [Int] = []
        while let item = index.popEarliest(isLive: { _ in true }) { order.append(item.ref.slot) }
        #expect(order == [2, 3, 1, 4])
    }

    private func item(_ slot: Int, _ expiry: Int64) -> ExpiryIndex.Item {
        ExpiryIndex.Item(expiry: expiry, ref: ref(slot, UInt64(slot)))
    }

    @Test func compactionKeepsOnlyLiveItems() {
        var index = ExpiryIndex()
        for sequence in 0 ..< UInt64(5000) { index.insert(ref(7, sequence), expiry: Int64(sequence)) }
        #expect(index.needsCompaction(liveCount: 1))
        index.rebuild(from: [ExpiryIndex.Item(expiry: 4999, ref: ref(7, 4999))])
        #expect(index.count == 1)
    }
}
