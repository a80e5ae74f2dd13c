import Foundation
import KacheWorkloads
import Testing

@Suite struct ShardedDictionaryBaselineTests {
    @Test func setsFromTwoThreadsAreAllReadBack() async {
        let map = ShardedDictionaryBaseline(minimumCapacity: 2_000)
        await withTaskGroup(of: Void.self) { group in
            for thread in 0..<2 {
                group.addTask {
                    for index in stride(from: thread, to: 2_000, by: 2) {
                        map.set(Data(WorkloadKeys.key(index).utf8), forKey: WorkloadKeys.key(index))
                    }
                }
            }
        }
        #expect(map.count == 2_000)
        #expect(map.get("key-0001999") == Data("key-0001999".utf8))
        #expect(map.get("key-0002000") == nil)
    }

    @Test func aSetReplacesTheEarlierValue() {
        let map = ShardedDictionaryBaseline()
        map.set(Data("one".utf8), forKey: "key")
        map.set(Data("two".utf8), forKey: "key")
        #expect(map.count == 1)
        #expect(map.get("key") == Data("two".utf8))
    }
}
