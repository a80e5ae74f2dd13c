import Testing
@testable import Kache

@Suite struct ExpiryIndexTests {
    @Test func popsInExpiryThenWriteOrder() {
        var index = ExpiryIndex()
        index.insert(key: "c", expiry: 30, sequence: 1)
        index.insert(key: "a", expiry: 10, sequence: 3)
        index.insert(key: "b", expiry: 10, sequence: 2)
        index.insert(key: "d", expiry: 20, sequence: 4)
        var order: [String] = []
        while let item = index.popEarliest(isLive: { _ in true }) { order.append(item.key) }
        #expect(order == ["b", "a", "d", "c"])
    }

    @Test func staleItemsAreSkipped() {
        var index = ExpiryIndex()
        var live: [String: UInt64] = [:]
        index.insert(key: "k", expiry: 5, sequence: 1)
        index.insert(key: "k", expiry: 50, sequence: 2) // overwrite: the first item is stale
        index.insert(key: "j", expiry: 20, sequence: 3)
        live = ["k": 2, "j": 3]
        let isLive = { (item: ExpiryIndex.Item) in live[item.key] == item.sequence }
        #expect(index.popEarliest(isLive: isLive)?.key == "j")
        #expect(index.popEarliest(isLive: isLive)?.expiry == 50)
        #expect(index.popEarliest(isLive: isLive) == nil)
    }

    @Test func compactionKeepsOnlyLiveItems() {
        var index = ExpiryIndex()
        for sequence in 0 ..< UInt64(5000) { index.insert(key: "hot", expiry: Int64(sequence), sequence: sequence) }
        #expect(index.needsCompaction(liveCount: 1))
        index.rebuild(from: [ExpiryIndex.Item(expiry: 4999, sequence: 4999, key: "hot")])
        #expect(index.count == 1)
    }
}
