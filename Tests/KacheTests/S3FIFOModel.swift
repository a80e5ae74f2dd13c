import Foundation

/// A plain S3-FIFO, each object with its own charge, by libCacheSim's rules
/// (in bytes): the reference the memory tier (`MemoryBudget`) and the disk
/// budget (`DiskQueues`) must each agree with, step by step. Written the
/// simplest way, with arrays, so that it can be read against the paper;
/// nothing here is shared with either. What the tier holds besides the
/// objects is the caller's: `room`, `fits` and `ghostCount`.
struct S3FIFOModel {
    /// Bytes the objects may take while `count` of them are in the cache.
    let room: (_ count: Int) -> Int
    /// Whether `count` objects charged `charged` bytes in all fit the budget.
    let fits: (_ count: Int, _ charged: Int) -> Bool
    /// The most keys the ghost remembers while `count` objects are in the cache.
    let ghostCount: (_ count: Int) -> Int
    var small: [String] = []
    var main: [String] = []
    var ghost: [(key: String, charge: Int)] = []
    var reads: [String: Int] = [:]
    var charges: [String: Int] = [:]
    var hasEvicted = false

    var count: Int { small.count + main.count }

    func isResident(_ key: String) -> Bool { reads[key] != nil }

    func charged(_ keys: [String]) -> Int { keys.reduce(0) { $0 + charges[$1]! } }

    /// A read: a hit counts, up to 3.
    mutating func get(_ key: String) -> Bool {
        guard let count = reads[key] else { return false }
        reads[key] = min(count + 1, 3)
        return true
    }

    /// A set of a key not in the cache: the ghost is asked, entries leave until this one fits, then it joins a queue.
    mutating func insert(_ key: String, charge: Int) {
        let remembered = ghost.contains { $0.key == key }
        ghost.removeAll { $0.key == key }
        while !fits(count + 1, charged(small) + charged(main) + charge), count > 0 { evict() }
        let room = room(count)
        if remembered || !hasEvicted && charged(small) >= room / 10 { main.append(key) } else { small.append(key) }
        reads[key] = 0
        charges[key] = charge
    }

    private mutating func evict() {
        hasEvicted = true
        let room = room(count)
        if charged(main) > room - room / 10 || small.isEmpty {
            while !main.isEmpty {
                let key = main.removeFirst()
                if reads[key]! >= 1 {
                    reads[key]! -= 1
                    main.append(key)
                } else {
                    forget(key)
                    return
                }
            }
        } else {
            while !small.isEmpty {
                let key = small.removeFirst()
                if reads[key]! >= 2 {
                    reads[key] = 0
                    main.append(key)
                } else {
                    let charge = charges[key]!
                    forget(key)
                    ghost.append((key, charge))
                    let room = self.room(count)
                    while ghost.reduce(0, { $0 + $1.charge }) > room - room / 10 || ghost.count > ghostCount(count) { ghost.removeFirst() }
                    return
                }
            }
        }
    }

    private mutating func forget(_ key: String) {
        reads[key] = nil
        charges[key] = nil
    }
}
