import DequeModule
import KacheStorage

/// Which values stay in memory, within a byte budget: S3-FIFO (Yang et al.,
/// "FIFO queues are all you need for cache eviction", SOSP '23).
///
/// Why S3-FIFO and not the CLOCK it replaced: most keys a cache sees are
/// read once, and CLOCK let each of them push a value that is read again out
/// of memory. S3-FIFO gives a new value a short probation, so those keys
/// leave quickly, and a hit still costs one write of a 2-bit counter in the
/// entry, under its shard's lock (W9's figures: docs/PERFORMANCE.md).
///
/// Two queues of entries, sized in bytes as the budget counts them, and a
/// ghost of keys (`GhostQueue`):
/// - `small` (a tenth of the limit) takes a value entering memory, unless the
///   ghost remembers its key: then `main` (the rest) takes it.
/// - Leaving `small`, a value read twice or more moves to `main`, its count
///   cleared; any other leaves memory, and the ghost remembers its key.
/// - Leaving `main`, a value read since it last passed goes round again with
///   its count less one; any other leaves memory.
/// - The next value to leave comes from `main` when it holds more than its
///   share or `small` is empty, else from `small`. Until a value has left
///   memory, one that finds `small` full goes to `main`.
///
/// These are the rules of libCacheSim's S3-FIFO, which W9 measures beside
/// (`scripts/hit-ratio.sh`). A value not yet written to its file can't
/// leave, since memory is its only copy: the hand that finds one parks it
/// outside the queues (`parked`) until its write lands, then it goes back to
/// the end of its queue. Passed over in place instead, it came round again
/// and again while the writer lagged: with the memory budget about as large
/// as the disk budget, W9 spent a third of its time in the hand.
struct MemoryBudget: Sendable {
    /// An entry's place in a queue, with the bytes its value was charged
    /// when it joined. A place whose entry is gone, or is another version, or
    /// has no value in memory any more, is stale: the queue drops it when it
    /// comes to the front.
    struct Slot: Sendable, Equatable {
        var ref: EntryRef
        var charge: Int
    }

    enum Queue: Sendable {
        case small
        case main
    }

    /// The most bytes of values to keep in memory.
    let limit: Int
    /// Bytes of values in memory now, each counted with its overhead (`charge(forValueOf:)`).
    private(set) var bytes = 0
    /// Values in memory now.
    private(set) var values = 0
    private(set) var small = Deque<Slot>()
    private(set) var main = Deque<Slot>()
    /// The charges of each queue's slots, stale ones included until dropped.
    private(set) var smallBytes = 0
    private(set) var mainBytes = 0
    private(set) var ghost: GhostQueue
    /// Slots of values found pinned (not yet written) by a hand, with the
    /// queue they left, by `EntryRef.packed`: out of the queues and their
    /// tallies until the write lands (`unpark`).
    private(set) var parked: [UInt64: (slot: Slot, queue: Queue)] = [:]
    /// Whether any value has left memory for the budget yet.
    private var hasEvicted = false

    /// The write-behind queue's memory, counted against the same limit (nil
    /// without a queue).
    let queued: QueuedBytes?

    init(limit: Int, queued: QueuedBytes? = nil) {
        self.limit = limit
        self.queued = queued
        ghost = GhostQueue(limit: limit - limit / 10, maximumCount: limit / 1024)
    }

    /// `small`'s share of the limit.
    var smallLimit: Int { limit / 10 }
    /// `main`'s share of the limit.
    var mainLimit: Int { limit - smallLimit }

    /// Whether values and the write-behind queue together pass the limit.
    var isOver: Bool { isOver(adding: 0) }

    /// Whether they would with `incoming` more bytes of values.
    func isOver(adding incoming: Int) -> Bool { bytes + incoming + (queued?.current ?? 0) > limit }

    /// Whether the values alone pass the limit (the queue changes outside the
    /// store's lock, so only this can be checked as an invariant).
    var valuesAreOver: Bool { bytes > limit }

    /// What a value of `size` bytes costs in memory, as the budget counts it:
    /// its bytes and, past the 14 bytes a `Data` holds inline, the heap
    /// allocations around them: a storage object (a 16-byte object header and
    /// six fields, 80 bytes from malloc) and malloc's header and 16-byte
    /// rounding of the bytes (16 on average). Counted so that the budget
    /// bounds resident memory, not only payload: at 200-byte values the
    /// overhead is a third more (docs/MEMORY.md).
    static func charge(forValueOf size: Int) -> Int {
        size <= 14 ? size : size + 96
    }

    /// Traps unless the totals equal those of the values counted afresh, each
    /// queue's tally is its slots' charges, and the values are within the
    /// limit unless nothing could leave (`anyPinned`: a value not yet
    /// written; `StoreState.checkInvariants`).
    func checkTotals(bytes counted: Int, values countedValues: Int, anyPinned: Bool) {
        precondition(counted == bytes, "memory bytes \(bytes) != sum of values \(counted)")
        precondition(countedValues == values, "memory values \(values) != \(countedValues)")
        precondition(small.reduce(0) { $0 + $1.charge } == smallBytes, "small queue's tally \(smallBytes) is not its slots' charges")
        precondition(main.reduce(0) { $0 + $1.charge } == mainBytes, "main queue's tally \(mainBytes) is not its slots' charges")
        precondition(!valuesAreOver || (small.isEmpty && main.isEmpty) || anyPinned, "memory over budget with nothing pinned")
    }

    /// Whether the ghost remembers the key hashing to `keyHash` (computed
    /// only when it remembers any); it forgets it.
    mutating func recall(_ keyHash: @autoclosure () -> Int) -> Bool {
        ghost.count > 0 && ghost.remove(keyHash())
    }

    /// Counts a value of `size` bytes of the entry `ref` entering memory: in
    /// `main` when its key was `recall`ed, else in `small`. When stale slots
    /// outnumber live ones, keeps only slots `isLive` accepts.
    mutating func admit(_ ref: EntryRef, size: Int, recalled: Bool, isLive: (Slot) -> Bool) {
        let slot = Slot(ref: ref, charge: Self.charge(forValueOf: size))
        bytes += slot.charge
        values += 1
        append(slot, to: recalled || !hasEvicted && smallBytes >= smallLimit ? .main : .small)
        if small.count + main.count > 2 * values + 1024 {
            small = Deque(small.filter(isLive))
            main = Deque(main.filter(isLive))
            smallBytes = small.reduce(0) { $0 + $1.charge }
            mainBytes = main.reduce(0) { $0 + $1.charge }
        }
    }

    /// Counts a value of `size` bytes leaving memory (removed, replaced or evicted).
    mutating func release(size: Int) {
        bytes -= Self.charge(forValueOf: size)
        values -= 1
    }

    /// The queue the next value to leave memory comes from.
    var queueToEvictFrom: Queue { mainBytes > mainLimit || small.isEmpty ? .main : .small }

    /// Takes the slot at the front of `queue`.
    mutating func popFront(_ queue: Queue) -> Slot? {
        switch queue {
        case .small:
            guard let slot = small.popFirst() else { return nil }
            smallBytes -= slot.charge
            return slot
        case .main:
            guard let slot = main.popFirst() else { return nil }
            mainBytes -= slot.charge
            return slot
        }
    }

    /// Puts `slot` at the end of `queue`.
    mutating func append(_ slot: Slot, to queue: Queue) {
        switch queue {
        case .small:
            small.append(slot)
            smallBytes += slot.charge
        case .main:
            main.append(slot)
            mainBytes += slot.charge
        }
    }

    /// Holds `slot`, taken from `queue`, whose value is not yet written,
    /// outside the queues. Parked slots whose entries `isLive` no longer
    /// accepts are dropped when they outnumber the values.
    mutating func park(_ slot: Slot, from queue: Queue, isLive: (Slot) -> Bool) {
        parked[slot.ref.packed] = (slot, queue)
        if parked.count > values + 1024 { parked = parked.filter { isLive($0.value.slot) } }
    }

    /// Puts the slot of `ref` back at the end of the queue it was parked
    /// from, if a hand parked it: its value has been written.
    mutating func unpark(_ ref: EntryRef) {
        guard !parked.isEmpty, let (slot, queue) = parked.removeValue(forKey: ref.packed) else { return }
        append(slot, to: queue)
    }

    /// Notes that the value of `slot`, taken from `queue`, left memory (its
    /// charge is `release`d apart); the ghost remembers a key that left `small`.
    mutating func noteEvicted(_ slot: Slot, from queue: Queue, keyHash: Int) {
        hasEvicted = true
        if queue == .small { ghost.add(keyHash, charge: slot.charge) }
    }

    /// Forgets every value (their records stay in the index, or go with it)
    /// and every remembered key.
    mutating func forgetValues() {
        bytes = 0
        values = 0
        small.removeAll()
        main.removeAll()
        smallBytes = 0
        mainBytes = 0
        ghost.removeAll()
        parked.removeAll()
        hasEvicted = false
    }
}

extension StoreState {
    /// Brings the value of the entry `ref`, (space, key), into memory: as
    /// libCacheSim's S3-FIFO inserts, the ghost is asked first, then values
    /// leave until this one fits, then it joins its queue. `hash` is the
    /// key's (`EntryIndex.hash(space:key:)`), which a set has already.
    mutating func admitToMemory(_ ref: EntryRef, size: Int, hash: Int) {
        let recalled = memory.recall(hash)
        if recalled { counters.memoryGhostHits += 1 }
        enforceMemoryBudget(makingRoomFor: MemoryBudget.charge(forValueOf: size))
        memory.admit(ref, size: size, recalled: recalled, isLive: { [index] in index.holdsValue($0.ref) })
    }

    /// Records that a value left memory (removed, replaced or evicted).
    mutating func releaseFromMemory(_ record: EntryRecord) {
        guard record.value != nil else { return }
        memory.release(size: record.rawSize)
    }

    /// Moves values out of memory until it is within budget, with room for
    /// `incoming` bytes more. With files behind them only the memory copy
    /// goes; in `memory` durability the entry goes.
    /// - Complexity: O(1) amortized per value admitted.
    mutating func enforceMemoryBudget(makingRoomFor incoming: Int = 0) {
        // Each slot is passed over at most four times a call: three reads
        // counted down, and once parked (pinned).
        var budget = (memory.small.count + memory.main.count) * 4 + 4
        while memory.isOver(adding: incoming), budget > 0, !memory.small.isEmpty || !memory.main.isEmpty {
            // Never an empty queue: `main` when `small` is empty.
            let queue = memory.queueToEvictFrom
            // As libCacheSim's S3-FIFO: a queue's hand moves until a value leaves from it.
            while budget > 0, let slot = memory.popFront(queue) {
                budget -= 1
                if evict(slot, from: queue) { break }
            }
        }
    }

    /// What the hand of `queue` does with `slot`, at its front.
    /// - Returns: whether a value left memory.
    private mutating func evict(_ slot: MemoryBudget.Slot, from queue: MemoryBudget.Queue) -> Bool {
        enum Step { case stale, pinned, goRound, promote, evictValue(EntryRecord, keyHash: Int), evictEntry(keyHash: Int) }
        let keepsFiles = keepsFiles
        let step = index.modify(slot.ref) { space, key, record -> Step in
            guard record.value != nil else { return .stale }
            if record.isPendingWrite { return .pinned }
            switch queue {
            case .small where record.frequency >= 2:
                record.frequency = 0
                return .promote
            case .main where record.frequency >= 1:
                record.frequency -= 1
                return .goRound
            default:
                let keyHash = queue == .small ? IndexShard.hash(space: UInt16(truncatingIfNeeded: space), key: key) : 0
                guard keepsFiles else { return .evictEntry(keyHash: keyHash) }
                let before = record
                record.value = nil
                return .evictValue(before, keyHash: keyHash)
            }
        }
        switch step ?? .stale {
        case .stale:
            return false
        case .pinned:
            memory.park(slot, from: queue) { [index] in index.holdsValue($0.ref) }
            return false
        case .goRound, .promote:
            memory.append(slot, to: .main)
            return false
        case let .evictValue(record, keyHash):
            releaseFromMemory(record)
            memory.noteEvicted(slot, from: queue, keyHash: keyHash)
            counters.memoryEvictions += 1
            return true
        case let .evictEntry(keyHash):
            guard let (space, key, record) = index.entry(slot.ref) else { return false }
            _ = index.remove(slot.ref)
            spaces[space].noteRemoved()
            _ = noteRemoved(space: space, key: key, record: record)
            memory.noteEvicted(slot, from: queue, keyHash: keyHash)
            counters.memoryEvictions += 1
            return true
        }
    }
}
