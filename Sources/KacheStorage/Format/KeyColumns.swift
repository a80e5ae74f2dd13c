/// The records of a block's keys section, a column per field: how blocks of
/// format version 6 (magic "KBL3") lay them out after the bases and the
/// key-space list. Specified in docs/FORMAT.md.
///
/// ```
/// flags           count × u8 (bit 1: tombstone)
/// key spaces      count × varint (index into the block's key-space list)
/// key lengths     count × varint
/// shared lengths  count × varint (bytes the key shares with the one before; 0 for the first)
/// suffixes        the bytes of each key after those, back to back
/// expiry seconds  count × varint ((expiry in ms − base expiry) / 1000)
/// expiry ms       count × varint ((expiry in ms − base expiry) % 1000)
/// sequences       count × zigzag varint (less the record's before; the first's less the base)
/// value lengths   count × varint (0 for a tombstone)
/// ```
///
/// Why columns: LZ4 charges about three bytes for every match, and a
/// record laid out field after field breaks a match between its unique
/// bytes (a key's last digits, its expiry) and the next record's. In
/// columns the fields that repeat (flags, key space, key and value lengths)
/// become runs, and what is left per record is the unique bytes alone.
/// Keys written in order share their prefixes (a key's length, which keys
/// of one shape repeat, is kept rather than its suffix's), and expiries split
/// into seconds and milliseconds because a time to live is usually whole
/// seconds: records set within the same millisecond share the remainder.
/// In a W8 directory of `kache-bench run` a record's keys section took
/// 9.9 bytes once compressed in rows, 7.1 in columns.
package enum KeyColumns {
    /// The most bytes a key may have: what an entry file's header can give
    /// (u16). A hostile block can then make a reader build at most
    /// 255 × 64 KiB of keys from shared prefixes.
    static let maximumKeyLength = Int(UInt16.max)

    /// Appends the columns of `records` to `keys`, whose bases are
    /// `baseExpiry` (ms) and `baseSequence`, with each record's key space's
    /// index in the block's list (`spaces`).
    static func append(
        _ records: ArraySlice<SegmentBlock.Record>, baseExpiry: Int64, baseSequence: UInt64, spaces: [Int], to keys: inout [UInt8]
    ) {
        // Records are read by index, field by field, in every loop here: a
        // `for record in records` copied each whole record (a retain and a
        // release of its key, key space and value), a third of this function.
        // The keys' bytes back to back, so that prefixes compare as bytes (a
        // `UTF8View` compared element by element was a third of the writer's
        // sealing), each appended from its contiguous UTF-8 (appended as a
        // `UTF8View`, a byte at a time: 220 instructions a key).
        var keyBytes: [UInt8] = []
        var ends: [Int] = []
        ends.reserveCapacity(records.count)
        for index in records.indices {
            var key = records[index].key
            key.withUTF8 { keyBytes.append(contentsOf: $0) }
            ends.append(keyBytes.count)
        }
        // Room for the columns at once: most fields take a byte or two (a varint at most ten).
        keys.reserveCapacity(keys.count + keyBytes.count + records.count * 24)
        for index in records.indices { keys.append(records[index].isTombstone ? SegmentBlock.tombstoneFlag : 0) }
        for space in spaces { keys.appendVarint(UInt64(space)) }
        var start = 0
        for end in ends {
            keys.appendVarint(UInt64(end - start))
            start = end
        }
        var suffixStarts: [Int] = []
        suffixStarts.reserveCapacity(records.count)
        keyBytes.withUnsafeBufferPointer { bytes in
            var previous = 0 ..< 0
            for end in ends {
                let start = previous.upperBound
                var shared = 0
                let most = min(previous.count, end - start)
                while shared < most, bytes[previous.lowerBound + shared] == bytes[start + shared] { shared += 1 }
                keys.appendVarint(UInt64(shared))
                suffixStarts.append(start + shared)
                previous = start ..< end
            }
            for (start, end) in zip(suffixStarts, ends) { keys.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start ..< end])) }
        }
        // Never negative: the base is the least expiry.
        let expiryOffsets = records.indices.map { UInt64(bitPattern: SegmentBlock.expiryUnits(records[$0].expiry) &- baseExpiry) }
        for offset in expiryOffsets { keys.appendVarint(offset / 1000) }
        for offset in expiryOffsets { keys.appendVarint(offset % 1000) }
        var previousSequence = baseSequence
        for index in records.indices {
            let sequence = records[index].sequence
            keys.appendVarint(SegmentBlock.zigzag(sequence &- previousSequence))
            previousSequence = sequence
        }
        for index in records.indices { keys.appendVarint(UInt64(records[index].value.count)) }
    }

    /// What a record weighs when its block's length is shared out
    /// (`SegmentBlock.shares`): its key and value, and eight bytes for its
    /// fields. Writer and reader both know these, so they share alike.
    static func weight(keyLength: Int, valueLength: Int) -> Int {
        keyLength + valueLength + 8
    }

    /// The block's records, each key rebuilt whole into `keyBytes`, every
    /// field checked as the row layout's reader checks it; the section must
    /// end exactly after the last column.
    /// - Throws: the damage, when any check fails.
    static func read(
        _ raw: UnsafeRawBufferPointer, count: Int
    ) throws(EntryFile.Damage) -> (records: [BlockKeys.Fields], keyBytes: [UInt8], spaces: [BlockKeys.Space]) {
        var records: [BlockKeys.Fields] = []
        var keyBytes: [UInt8] = []
        var spaces: [BlockKeys.Space] = []
        try read(raw, count: count, into: &records, keyBytes: &keyBytes, spaces: &spaces)
        return (records, keyBytes, spaces)
    }

    /// `read(_:count:)` of the raw section `section`, into arrays whose
    /// storage is reused from block to block (`BlockKeys.read`).
    static func read(
        _ section: [UInt8], count: Int, into records: inout [BlockKeys.Fields], keyBytes: inout [UInt8], spaces: inout [BlockKeys.Space]
    ) throws(EntryFile.Damage) {
        try section.withUnsafeBytes { raw in
            Result { () throws(EntryFile.Damage) in try read(raw, count: count, into: &records, keyBytes: &keyBytes, spaces: &spaces) }
        }.get()
    }

    private static func read(
        _ raw: UnsafeRawBufferPointer, count: Int, into records: inout [BlockKeys.Fields], keyBytes: inout [UInt8], spaces: inout [BlockKeys.Space]
    ) throws(EntryFile.Damage) {
        var reader = BinaryReader(raw)
        // Moved out, so that the list's storage is free to be reused.
        var previousSpaces: [BlockKeys.Space] = []
        swap(&previousSpaces, &spaces)
        let prelude = try SegmentBlock.Prelude(&reader, recordCount: count, reusing: consume previousSpaces)
        // Every field but the share is set below, and the share by `BlockKeys.read`.
        records.resize(to: count, filler: BlockKeys.Fields())
        do {
            // Through a buffer: each `records[index].field = ` checked the array's uniqueness.
            try records.withUnsafeMutableBufferPointer { records in
                // Read through a copy, written back as the closure ends (on a
                // throw too): through the capture, every read loaded and
                // stored the reader's position in memory.
                var columns = reader
                defer { reader = columns }
                for index in 0 ..< count {
                    let flags = try columns.read(UInt8.self)
                    guard flags & ~SegmentBlock.tombstoneFlag == 0 else { throw EntryFile.Damage.unknownFlags(UInt16(flags)) }
                    records[index].isTombstone = flags & SegmentBlock.tombstoneFlag != 0
                }
                try columns.forEachVarint(count) { index, space in
                    guard prelude.spaces.names(space) else { throw EntryFile.Damage.invalidName }
                    records[index].space = UInt16(space)
                }
                var keysLength = 0
                try columns.forEachVarint(count) { index, length in
                    guard length > 0, length <= maximumKeyLength else { throw EntryFile.Damage.invalidName }
                    records[index].keyLength = UInt32(length)
                    keysLength += Int(length)
                }
                // The shared lengths wait in `keyStart` until the suffixes come.
                var previousLength = 0
                try columns.forEachVarint(count) { index, shared in
                    guard shared <= min(previousLength, Int(records[index].keyLength)) else { throw EntryFile.Damage.invalidName }
                    records[index].keyStart = UInt32(shared)
                    previousLength = Int(records[index].keyLength)
                }
                // Each key is its shared prefix, copied from the key before, then its suffix.
                keyBytes.resize(to: keysLength, filler: 0)
                try keyBytes.withUnsafeMutableBufferPointer { keys in
                    var start = 0
                    var previousStart = 0
                    for index in 0 ..< count {
                        let shared = Int(records[index].keyStart)
                        let length = Int(records[index].keyLength)
                        let suffix = try columns.readBytes(length - shared)
                        // Within `keys`, whose length is the lengths' sum.
                        let key = UnsafeMutableRawPointer(keys.baseAddress! + start)
                        key.copyShort(from: keys.baseAddress! + previousStart, count: shared)
                        if let suffixStart = suffix.baseAddress { (key + shared).copyShort(from: suffixStart, count: suffix.count) }
                        records[index].keyStart = UInt32(start)
                        previousStart = start
                        start += length
                    }
                    // Keys all ASCII (the usual case) are all valid, checked in one pass; otherwise one by one.
                    guard !BinaryReader.isBelow0x80(UnsafeRawBufferPointer(keys)) else { return }
                    for record in records {
                        let key = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(keys)[Int(record.keyStart) ..< Int(record.keyStart + record.keyLength)])
                        guard String.isValidUTF8(key) else { throw EntryFile.Damage.invalidName }
                    }
                }
                try columns.forEachVarint(count) { index, seconds in
                    // Seconds past any instant an `Int64` of nanoseconds holds are damage, not a wrap.
                    guard seconds <= UInt64(Int64.max / 1_000_000_000) else { throw EntryFile.Damage.lengthMismatch(expected: 0, actual: Int(clamping: seconds)) }
                    records[index].expiry = Int64(seconds) * 1000
                }
                try columns.forEachVarint(count) { index, milliseconds in
                    guard milliseconds < 1000 else { throw EntryFile.Damage.lengthMismatch(expected: 999, actual: Int(clamping: milliseconds)) }
                    records[index].expiry = (prelude.baseExpiry &+ records[index].expiry &+ Int64(milliseconds)) &* SegmentBlock.nanosecondsPerExpiryUnit
                }
                var sequence = prelude.baseSequence
                try columns.forEachVarint(count) { index, step in
                    sequence &+= SegmentBlock.unzigzag(step)
                    guard sequence <= EntryFile.largestSequence else { throw EntryFile.Damage.sequenceOutOfRange(sequence) }
                    records[index].sequence = sequence
                }
                try columns.forEachVarint(count) { index, length in
                    guard length <= SegmentBlock.maximumRawLength, !records[index].isTombstone || length == 0 else {
                        throw EntryFile.Damage.lengthMismatch(expected: records[index].isTombstone ? 0 : SegmentBlock.maximumRawLength, actual: Int(clamping: length))
                    }
                    records[index].valueLength = UInt32(length)
                }
            }
        } catch {
            throw error as? EntryFile.Damage ?? .truncated(length: reader.offset)
        }
        guard reader.remaining == 0 else { throw .lengthMismatch(expected: raw.count - reader.remaining, actual: raw.count) }
        spaces = prelude.spaces.entries
    }

    /// Record `index` as a file of its own would give its header, and its
    /// value's range in the values section: the whole section is read and
    /// checked (a block holds at most 255 records), as the open reads it.
    static func record(_ index: Int, in raw: UnsafeRawBufferPointer, count: Int) throws(EntryFile.Damage) -> (EntryFile.Header, Range<Int>) {
        let (records, keyBytes, spaces) = try read(raw, count: count)
        let valueStart = records[..<index].reduce(0) { $0 + Int($1.valueLength) }
        let record = records[index]
        let key = BlockKeys.key(of: record, in: keyBytes)
        return (record.header(key: key, space: spaces[Int(record.space)]), valueStart ..< valueStart + Int(record.valueLength))
    }
}
