import Foundation
import KacheStorage

/// The settled entries of a current manifest of version 4 or later (listed by their
/// sequences, their records read from the segments' keys sections), restored on all cores.
///
/// One by one under the store's lock, a million of them took 0.8 s of W8's
/// 1 s open. Instead:
/// 1. `pick` runs on the core that reads a segment, block by block as the
///    scan reads them (`BlockKeys`: fixed fields, a key a string only once
///    it is kept): it keeps the records whose sequence the manifest
///    lists, numbers their key spaces, keeps each one's fields (`Pick`),
///    and hashes its key into the index's shards;
/// 2. `StoreState.restoreSettled` fills the shards on all cores, each under
///    its own lock (its table made just before), and keeps each shard's accounting apart;
/// 3. then adds the sums to the key spaces, the disk budget and the segments' ledger.
final class SettledRestore: Sendable {
    /// A settled record: what its entry in the index is made of, and the hash of its key.
    ///
    /// Not an `IndexShard.Entry`: an entry's value field (`Data?`, nil here)
    /// made every copy of a pick go through `Data`'s outlined copy and
    /// destroy: 170 instructions a record more between picking and filling
    /// the shards (callgrind, `kache-bench ready` on W8).
    struct Pick: Sendable {
        var key: String
        var hash: Int
        var expiry: Timestamp
        var sequence: UInt64
        /// `RecordLocation.place`: the segment in the top 32 bits.
        var place: UInt64
        var length: UInt32
        var rawSize: UInt32
        var space: UInt16
    }

    /// A key space the manifest names, as the store numbered it. A settled
    /// entry is in one of them (the manifest lists every key space); a record
    /// of another kind under its name belongs to no entry.
    struct Space: Sendable {
        var number: Int
        var kind: UInt8
    }

    private let settled: SettledVersions
    private let spaces: [String: Space]
    /// Each shard's picks, a list for each batch of a segment's records: the
    /// core that fills a shard takes its lists, and frees them, apart from the others.
    private let picked: [Locked<[(segment: UInt32, picks: [Pick])]>]

    init(settled: SettledVersions, spaces: [String: Space]) {
        self.settled = settled
        self.spaces = spaces
        picked = (0 ..< EntryIndex.shardCount).map { _ in Locked([]) }
    }

    /// Keeps the settled records of segment `id`, `length` bytes long, whose
    /// blocks `read` hands over as it reads them. Called once per segment,
    /// from several threads at once.
    /// - Complexity: O(records)
    func pick(segment id: UInt32, length: Int, reading read: ((SegmentStore.ScannedBlock) -> Void) -> Void) {
        var byShard = [[Pick]](repeating: [], count: EntryIndex.shardCount)
        // Room for a record per 32 bytes (W8's take 45): grown as they were
        // picked, the lists were copied into pages faulted afresh (2 % of
        // W8's open in perf). Room never used is never touched, so it costs no memory.
        for shard in byShard.indices { byShard[shard].reserveCapacity(length / 32 / EntryIndex.shardCount) }
        // A segment's blocks mostly name the same key spaces: each list is
        // looked up in `spaces` when it differs from the block's before.
        var listed: [BlockKeys.Space] = []
        var numbered: [Space?] = []
        // The settled run the last record was in.
        var run = 0
        let hasher = SipHash13.process
        read { block in
            let keys = block.keys
            if keys.spaces != listed {
                listed = keys.spaces
                numbered = listed.map { listed in listed.name.flatMap { spaces[$0] }.flatMap { $0.kind == listed.kind ? $0 : nil } }
            }
            // The lists through a buffer: appended to by subscript, each pick checked the outer array's uniqueness too.
            byShard.withUnsafeMutableBufferPointer { byShard in keys.keyBytes.withUnsafeBytes { keyBytes in
                for index in keys.records.indices {
                    let record = keys.records[index]
                    guard settled.contains(record.sequence, run: &run), !record.isTombstone, let space = numbered[Int(record.space)] else { continue }
                    // Hashed from the bytes the key is made of: the string is made once, for the entry.
                    let utf8 = UnsafeRawBufferPointer(rebasing: keyBytes[Int(record.keyStart) ..< Int(record.keyStart + record.keyLength)])
                    // Copied in, not decoded: a key of up to 15 ASCII bytes becomes a
                    // small string checked a word at once (`String(decoding:)` went
                    // through its repairing decoder, 76 more instructions a key).
                    let key = String(unsafeUninitializedCapacity: utf8.count) { bytes in
                        if let target = bytes.baseAddress, let source = utf8.baseAddress { UnsafeMutableRawPointer(target).copyShort(from: source, count: utf8.count) }
                        return utf8.count
                    }
                    let space16 = UInt16(truncatingIfNeeded: space.number)
                    let (hash, shard) = EntryIndex.hash(space: space16, key: key, utf8: utf8, hasher: hasher)
                    let location = RecordLocation(segment: id, offset: block.offset, index: index, length: Int(record.share))
                    byShard[shard].append(Pick(
                        key: key, hash: hash, expiry: record.expiry, sequence: record.sequence, place: location.place,
                        length: record.share, rawSize: record.valueLength, space: space16
                    ))
                }
            } }
        }
        for shard in byShard.indices where !byShard[shard].isEmpty {
            picked[shard].withLock { $0.append((id, byShard[shard])) }
        }
    }

    /// Takes shard `shard`'s picks, a list for each segment, in the order of their numbers.
    func takePicks(shard: Int) -> [(segment: UInt32, picks: [Pick])] {
        picked[shard].withLock { lists in
            defer { lists = [] }
            return lists.sorted { $0.segment < $1.segment }
        }
    }
}

extension StoreState {
    /// The key spaces `manifest` names, numbered (each added if it is new, as
    /// `restoreKeySpaces` would), for `SettledRestore` to name records' key spaces by.
    mutating func settledRestore(for manifest: Manifest) -> SettledRestore {
        var numbers: [String: SettledRestore.Space] = [:]
        for saved in manifest.spaces {
            switch spaces.findOrAdd(named: saved.name, kind: saved.kind, capacity: saved.capacity) {
            case let .found(space), let .added(space): numbers[saved.name] = .init(number: space, kind: saved.kind.rawValue)
            case .otherKind, .full: continue
            }
        }
        return SettledRestore(settled: manifest.settledVersions, spaces: numbers)
    }

    /// What one shard's restore added, accounted apart from the other shards'.
    private struct ShardRestore: Sendable {
        var budget: DiskBudget
        var rawBytes = 0
        var nextSequence: UInt64 = 0
        var live = SegmentStore.LiveTally()
        /// Where the versions it replaced were (two copies of one record:
        /// compaction's, and the original a crash kept).
        var replaced: [RecordLocation] = []
        /// The slab's length before: the restore's new entries are in the slots from here on.
        var firstSlot: Int
        /// The slots below `firstSlot` that it set, each flagged if the entry was new.
        var otherSlots: [(slot: Int, isNew: Bool)] = []
    }

    /// Restores the settled entries `restore` picked, of a current manifest of
    /// version 4 or later; its other entries are `restoreKeySpaces`'s.
    /// - Complexity: O(records) on all cores, then O(entries) on two (the expiry heaps); and
    ///   O(q log q) for the q items of Queues.
    mutating func restoreSettled(_ restore: SettledRestore, from manifest: Manifest) {
        var noEntries = budget
        noEntries.forgetEntries()
        let emptyBudget = noEntries
        let restored = Locked([ShardRestore?](repeating: nil, count: EntryIndex.shardCount))
        let index = index
        DispatchQueue.concurrentPerform(iterations: EntryIndex.shardCount) { shard in
            // Taken here, so that the picks are freed on this core too.
            let lists = restore.takePicks(shard: shard)
            // As many as were picked: a manifest's runs may claim any number of sequences.
            let count = lists.reduce(0) { $0 + $1.picks.count }
            index.restoring(shard: shard, adding: count) { table in
                // Made here and handed out once at the end: captured from
                // outside, each of its fields was loaded and stored in memory
                // per entry.
                var part = ShardRestore(budget: emptyBudget, firstSlot: table.entries.count)
                defer { restored.withLock { $0[shard] = part } }
                for (segment, picks) in lists {
                    // A segment's records counted once for the list, not one by one.
                    var liveBytes = 0
                    picks.withUnsafeBufferPointer { picks in
                        for pick in picks.indices {
                            let location = RecordLocation(place: picks[pick].place, length: Int(picks[pick].length))
                            let keyBytes = picks[pick].key.utf8.count
                            let entry = IndexShard.Entry(
                                key: picks[pick].key, expiry: picks[pick].expiry, sequence: picks[pick].sequence, value: nil,
                                place: picks[pick].place, length: picks[pick].length, rawSize: picks[pick].rawSize,
                                space: picks[pick].space, flags: .occupied
                            )
                            let (previous, slot) = index.restore(consume entry, hash: picks[pick].hash, into: &table, shard)
                            let facts = DiskFacts(isPendingWrite: false, length: location.length, location: location, inMain: true)
                            part.budget.account(adding: facts, keyBytes: keyBytes)
                            part.rawBytes += Int(picks[pick].rawSize)
                            liveBytes += location.length
                            part.nextSequence = max(part.nextSequence, picks[pick].sequence + 1)
                            if slot < part.firstSlot { part.otherSlots.append((slot, previous == nil)) }
                            if let previous {
                                part.budget.account(replacing: previous, with: nil, keyBytes: keyBytes)
                                part.rawBytes -= previous.rawSize
                                if let location = previous.location { part.replaced.append(location) }
                            }
                        }
                    }
                    part.live.add(segment: segment, bytes: liveBytes, count: picks.count)
                }
            }
        }

        var live = SegmentStore.LiveTally()
        var replaced: [RecordLocation] = []
        let parts = restored.withLock { $0 }.compactMap(\.self)
        for part in parts {
            budget.add(entriesOf: part.budget)
            rawBytes += part.rawBytes
            nextSequence = max(nextSequence, part.nextSequence)
            live.add(part.live)
            replaced += part.replaced
        }
        segments?.noteLive(live)
        for location in replaced { segments?.noteDead(location) }

        // The expiry order, read from the slabs of each half of the shards on a core of its own.
        let firstSlots = restored.withLock { $0.map { $0?.firstSlot ?? 0 } }
        let otherSlots = restored.withLock { $0.map { $0?.otherSlots ?? [] } }
        // Read once: `spaces[space]` is a copy of the whole key space.
        let isQueue = spaces.map { $0.kind == .queue }
        let halves = Locked([EntryIndex.RestoredOrder?](repeating: nil, count: 2))
        DispatchQueue.concurrentPerform(iterations: 2) { half in
            let shards = half == 0 ? 0 ..< EntryIndex.shardCount / 2 : EntryIndex.shardCount / 2 ..< EntryIndex.shardCount
            let order = index.restoredOrder(
                shards: shards, firstSlots: firstSlots, otherSlots: otherSlots, spaceCount: isQueue.count, isQueue: isQueue
            )
            halves.withLock { $0[half] = order }
        }
        var (first, second) = halves.withLock { halves in
            defer { halves = [] }
            return (halves[0]!, halves[1]!)
        }
        for space in spaces.indices where !first.items[space].isEmpty || !second.items[space].isEmpty {
            // Queue order is write order.
            let order = (first.queued[space] + second.queued[space]).sorted { $0.sequence < $1.sequence }.map(\.ref)
            // Taken out of the halves, not shared, so that each becomes its heap's storage uncopied.
            var firstItems: [ExpiryIndex.Item] = []
            var secondItems: [ExpiryIndex.Item] = []
            swap(&firstItems, &first.items[space])
            swap(&secondItems, &second.items[space])
            spaces[space].noteRestored(
                consume firstItems, consume secondItems, newCount: first.newCounts[space] + second.newCounts[space], newInWriteOrder: order, index: index
            )
        }
        nextSequence = max(nextSequence, manifest.nextSequence)
    }
}
