import DequeModule
import KacheStorage

/// An entry's place in the disk budget's S3-FIFO (`DiskQueues`): reads since
/// it joined its queue or its hand last passed it, at most 3, and whether
/// that queue is `main`. Kept in a byte beside the entry
/// (`IndexShard.diskPlaces`): the entry's 64 bytes have no bits to spare, and
/// the memory tier's counter can't serve, since each tier's hand counts its own down.
struct DiskPlace: Sendable, Equatable {
    private(set) var rawValue: UInt8

    static let highestReads: UInt8 = 3
    private static let mainBit: UInt8 = 4

    init(reads: UInt8 = 0, inMain: Bool = false) {
        rawValue = min(reads, Self.highestReads) | (inMain ? Self.mainBit : 0)
    }

    var reads: UInt8 { rawValue & Self.highestReads }
    var inMain: Bool { rawValue & Self.mainBit != 0 }

    /// Counts a read (saturating).
    mutating func noteRead() {
        if reads < Self.highestReads { rawValue += 1 }
    }
}

/// Which entries stay within the disk budget: S3-FIFO, as the memory tier
/// (`MemoryBudget`), over whole entries and what each is charged on disk.
///
/// Why not the earliest expiry it replaced: for a client whose responses
/// share one TTL that is FIFO by insertion, and a key read a thousand times
/// left before one never read again. On W9's trace (a) at 1 % it hit 0.33
/// of requests, where FIFO hits 0.45 and S3-FIFO 0.58 (docs/PERFORMANCE.md).
/// Expired entries still go first: every insert sweeps them before it makes room.
///
/// The rules are `MemoryBudget`'s, over bytes of records (`DiskBudget`):
/// - `small` takes a new key (a tenth of the room for records), unless the
///   ghost remembers it: then `main` does. A new version of a key present
///   keeps its place and its reads.
/// - Leaving `small`, an entry read twice or more moves to `main`, its count
///   cleared; any other leaves the cache, and the ghost remembers its key.
///   So does an entry that expires in `main` (`rememberForDiskBudget`).
/// - Leaving `main`, an entry read since its hand last passed goes round
///   again, its count less one; any other leaves the cache.
/// - The next entry to leave comes from `main` when it holds more than its
///   share or `small` is empty. Until an entry has left, one that finds
///   `small` full goes to `main`.
///
/// The queues hold references (`EntryRef`); one whose entry left, or is now
/// another version, is stale and dropped when it comes to the front. The
/// bytes in each queue are `DiskBudget.smallCharged` and `mainCharged`, kept
/// by the one function that counts charges, from each entry's `DiskPlace`.
/// Only kept with a budget: without one nothing is ever evicted.
struct DiskQueues: Sendable {
    enum Queue: Sendable {
        case small
        case main
    }

    private(set) var small = Deque<EntryRef>()
    private(set) var main = Deque<EntryRef>()
    /// Keys that left `small` unread, by hash. At most as many as there are
    /// entries (a key remembered costs about 64 bytes; an entry in the index, 100).
    var ghost = GhostQueue(limit: 0, maximumCount: 0)
    /// Whether any entry has left for the budget yet.
    var hasEvicted = false

    var isEmpty: Bool { small.isEmpty && main.isEmpty }

    mutating func append(_ ref: EntryRef, to queue: Queue) {
        switch queue {
        case .small: small.append(ref)
        case .main: main.append(ref)
        }
    }

    mutating func popFront(_ queue: Queue) -> EntryRef? {
        switch queue {
        case .small: small.popFirst()
        case .main: main.popFirst()
        }
    }

    /// Keeps only the references `isLive` accepts, when stale ones outnumber
    /// the `entries` live ones (removals and new versions leave theirs behind).
    mutating func dropStale(entries: Int, isLive: (EntryRef, Queue) -> Bool) {
        guard small.count + main.count > 2 * entries + 1024 else { return }
        small = Deque(small.filter { isLive($0, .small) })
        main = Deque(main.filter { isLive($0, .main) })
    }

    /// Forgets every entry and remembered key.
    mutating func removeAll() {
        self = DiskQueues()
    }
}

extension StoreState {
    /// Whether the disk budget's queues are kept: there is a budget and files.
    var keepsDiskQueues: Bool { budget.limit != nil }

    /// Bytes the entries' records may take: the budget less the directory's
    /// own footprint and the room held for its index files.
    /// - Complexity: O(key spaces)
    var diskRoomForRecords: Int {
        (budget.limit ?? 0) - budget.footprint - indexRoom()
    }

    /// Whether the disk budget's ghost remembers the key hashing to `hash`
    /// (`EntryIndex.hash(space:key:)`), for a key not in the cache; it forgets
    /// it. Asked before entries leave to make room, as S3-FIFO does, so that
    /// their keys don't push this one out first.
    mutating func recallForDiskBudget(hash: Int) -> Bool {
        guard keepsDiskQueues, diskQueues.ghost.count > 0, diskQueues.ghost.remove(hash) else { return false }
        counters.budgetGhostHits += 1
        return true
    }

    /// The place of a new version in the disk budget's queues: that of the
    /// version it replaces (`current`), if any; `main` when the ghost
    /// remembered its key (`recalled`); else `small`.
    func diskPlace(replacing current: EntryRecord?, recalled: Bool) -> DiskPlace {
        guard keepsDiskQueues else { return DiskPlace() }
        if let current { return current.diskPlace }
        if recalled || !diskQueues.hasEvicted && budget.smallCharged >= diskRoomForRecords / 10 { return DiskPlace(inMain: true) }
        return DiskPlace()
    }

    /// Puts the entry `ref`, at `place`, at the end of its disk queue.
    mutating func enqueueForDiskBudget(_ ref: EntryRef, at place: DiskPlace) {
        guard keepsDiskQueues else { return }
        diskQueues.append(ref, to: place.inMain ? .main : .small)
        diskQueues.dropStale(entries: entryCount) { [index] ref, queue in
            index.diskPlace(ref).map { $0.inMain == (queue == .main) } ?? false
        }
    }

    /// Rebuilds the disk queues after a restore, the first written first in
    /// each: a restore puts every entry in `main` (it does not know what was read).
    /// - Complexity: O(n log n), with a budget only.
    mutating func rebuildDiskQueues() {
        diskQueues.removeAll()
        guard keepsDiskQueues else { return }
        var refs: [(sequence: UInt64, ref: EntryRef, inMain: Bool)] = []
        refs.reserveCapacity(entryCount)
        index.forEach(withValues: false) { _, _, record, ref in refs.append((record.sequence, ref, record.diskPlace.inMain)) }
        refs.sort { $0.sequence < $1.sequence }
        for entry in refs { diskQueues.append(entry.ref, to: entry.inMain ? .main : .small) }
    }

    /// Evicts entries by the disk budget's S3-FIFO, across every key space,
    /// until `bytes` more of entry files (and a new entry of `newKeyBytes`)
    /// fit within the disk budget (the new entry in a segment if `inSegment`).
    /// - Complexity: O(1) amortized per evicted entry: each reference is
    ///   passed over at most four times before it leaves (three reads
    ///   counted down, one move to `main`); never a scan.
    mutating func makeRoom(forBytes bytes: Int, newKeyBytes: Int? = nil, inSegment: Bool = false) -> [Removal] {
        var removals: [Removal] = []
        var steps = (diskQueues.small.count + diskQueues.main.count) * 4 + 4
        while wouldExceedDiskBudget(adding: bytes, newKeyBytes: newKeyBytes, inSegment: inSegment), steps > 0, !diskQueues.isEmpty {
            let room = diskRoomForRecords
            let queue: DiskQueues.Queue = budget.mainCharged > room - room / 10 || diskQueues.small.isEmpty ? .main : .small
            // As S3-FIFO's: a queue's hand moves until an entry leaves from it.
            while steps > 0, let ref = diskQueues.popFront(queue) {
                steps -= 1
                if let removal = passDiskHand(over: ref, in: queue) {
                    removals.append(removal)
                    break
                }
            }
        }
        if !removals.isEmpty { mutations += 1 }
        return removals
    }

    /// What the hand of the disk queue `queue` does with `ref`, at its front.
    /// - Returns: the entry's removal, when it left the cache.
    private mutating func passDiskHand(over ref: EntryRef, in queue: DiskQueues.Queue) -> Removal? {
        enum Step { case stale, promote, goRound, evict(space: Int, key: String) }
        let step = index.modify(ref) { space, key, record -> Step in
            let place = record.diskPlace
            guard place.inMain == (queue == .main) else { return .stale }
            switch queue {
            case .small where place.reads >= 2:
                let before = record
                record.diskPlace = DiskPlace(inMain: true)
                budget.account(replacing: before, with: record, keyBytes: key.utf8.count)
                return .promote
            case .main where place.reads >= 1:
                record.diskPlace = DiskPlace(reads: place.reads - 1, inMain: true)
                return .goRound
            default:
                return .evict(space: space, key: key)
            }
        }
        switch step ?? .stale {
        case .stale:
            return nil
        case .promote, .goRound:
            diskQueues.append(ref, to: .main)
            return nil
        case let .evict(space, key):
            guard let (_, record) = index.remove(ref) else { return nil }
            spaces[space].noteRemoved()
            let charge = budget.charge(of: record)
            budget.evictions += 1
            budget.evictedBytes += charge
            diskQueues.hasEvicted = true
            let removal = noteRemoved(space: space, key: key, record: record)
            if queue == .small { rememberForDiskBudget(space: space, key: key, charge: charge) }
            return removal
        }
    }

    /// Has the disk budget's ghost remember (space, key), whose entry was
    /// charged `charge` and has just left: evicted from `small` unread, or
    /// expired while in `main`. Why the expired too: a key read often enough
    /// to stay in `main` is likely asked again, and set again it would
    /// otherwise wait in `small`, where a key read less than every few
    /// hundred requests is evicted before its second read, and come back
    /// only through the ghost, one more miss later. On W9's trace (c), whose
    /// TTLs differ, that made the disk budget hit more than S3-FIFO instead of less.
    mutating func rememberForDiskBudget(space: Int, key: String, charge: Int) {
        guard keepsDiskQueues else { return }
        // Bounded by the room and the entries left once it has gone.
        let room = diskRoomForRecords
        diskQueues.ghost.resize(limit: room - room / 10, maximumCount: entryCount)
        diskQueues.ghost.add(IndexShard.hash(space: UInt16(truncatingIfNeeded: space), key: key), charge: charge)
    }

    /// Evicts for the disk budget when what records were charged while
    /// pending fell short of what they took once written (or compaction
    /// blocked them anew): the budget holds again once this returns.
    mutating func settleDiskBudget() -> [Removal] {
        guard let limit = budget.limit, diskUse() > limit else { return [] }
        return makeRoom(forBytes: 0)
    }
}
