import Foundation

/// The records of one valid block without their values, each in fixed-size
/// fields, its key as bytes: what an open reads of a segment, with no string
/// made per record. `header(_:)` makes the `EntryFile.Header` a file of its
/// own would give.
///
/// Why not headers: a header holds its key and key-space name as strings,
/// and W8's open made a million of them to hand on a few fields
/// (`kache-bench ready`: parsing them was a fifth of the open's CPU time).
///
/// ```swift
/// let keys = try BlockKeys(block)
/// for record in keys.records where !record.isTombstone { print(keys.key(of: record), record.sequence) }
/// ```
package struct BlockKeys: Sendable {
    /// A record's fields.
    package struct Fields: Sendable {
        package var expiry: Timestamp
        package var sequence: UInt64
        /// Where its key's UTF-8 (valid, not empty) is in `keyBytes`.
        package var keyStart: UInt32
        package var keyLength: UInt32
        package var valueLength: UInt32
        /// What it costs on disk: its share of its block (`SegmentBlock.shares`).
        package var share: UInt32
        /// Its key space's index in `spaces`.
        package var space: UInt16
        package var isTombstone: Bool

        /// Every field zero: filled in by the reader, a column at a time.
        init() {
            self.init(expiry: 0, sequence: 0, keyStart: 0, keyLength: 0, valueLength: 0, share: 0, space: 0, isTombstone: false)
        }

        init(
            expiry: Timestamp, sequence: UInt64, keyStart: UInt32, keyLength: UInt32, valueLength: UInt32, share: UInt32, space: UInt16,
            isTombstone: Bool
        ) {
            self.expiry = expiry
            self.sequence = sequence
            self.keyStart = keyStart
            self.keyLength = keyLength
            self.valueLength = valueLength
            self.share = share
            self.space = space
            self.isTombstone = isTombstone
        }

        /// The header a file of its own would give the record (a block's
        /// values are stored together: its stored length is its raw length).
        func header(key: String, space: Space) -> EntryFile.Header {
            EntryFile.Header(
                flags: isTombstone ? .tombstone : [], expiry: expiry, sequence: sequence,
                rawLength: Int(valueLength), storedLength: Int(valueLength), key: key, space: space.name ?? "", kind: space.kind
            )
        }
    }

    /// A key space the block's records name.
    package struct Space: Sendable, Equatable {
        /// Nil when the bytes are not UTF-8: damage only if a record names it,
        /// and no record of a valid block does.
        package var name: String?
        package var kind: UInt8
    }

    package private(set) var records: [Fields] = []
    /// The bytes the keys are in: the raw keys section of a block of format
    /// version 5 (keys in rows), the keys back to back otherwise.
    package private(set) var keyBytes: [UInt8] = []
    package private(set) var spaces: [Space] = []
    /// The headers of a block of version 3 or a record of version 2, as
    /// read (a record of version 2 has its own stored length and flags).
    private var headers: [EntryFile.Header]?
    /// Kept between reads for their storage alone: the decompressed keys
    /// section of a block in columns, and its records' raw ends.
    private var section: [UInt8] = []
    private var ends: [Int] = []

    /// No records, for `read` to fill.
    package init() {}

    /// Reads a block of the current layout or of version 3, checking all of it
    /// (magic, checksum, lengths, every record) but the decompression of the values.
    /// - Throws: the damage, when any check fails.
    package init(_ block: UnsafeRawBufferPointer) throws(EntryFile.Damage) {
        try read(block)
    }

    /// Replaces the records with `block`'s, as `init(_:)` reads them, in
    /// the storage this value already has: a scan reads every block of a
    /// segment into one `BlockKeys`. Made afresh for each block, its arrays
    /// (an allocation each, their type's metadata looked up, and the frees)
    /// cost about 3,000 instructions a block, a ninth of W5's open, whose
    /// blocks hold 7 records.
    /// - Throws: the damage, when any check fails; the records are then unspecified.
    package mutating func read(_ block: UnsafeRawBufferPointer, verifying verification: SegmentBlock.Verification = .block) throws(EntryFile.Damage) {
        guard !SegmentBlock.startsVersion3Block(block) else {
            let contents = try SegmentBlock.Version3.decode(block)
            self = BlockKeys(headers: contents.records.map(\.header), shares: contents.shares)
            return
        }
        let sections = try Sections(block, verifying: verification)
        headers = nil
        if sections.hasKeyColumns {
            try sections.rawKeys(into: &section)
            try KeyColumns.read(section, count: sections.count, into: &records, keyBytes: &keyBytes, spaces: &spaces)
            // Each record's end by the weights the writer shared the block by
            // (`SegmentBlock.shares(of:byWeights:)`), set through buffers: an
            // element set by subscript checked the array's uniqueness each time.
            ends.resize(to: records.count, filler: 0)
            ends.withUnsafeMutableBufferPointer { ends in
                records.withUnsafeBufferPointer { records in
                    var end = 0
                    for index in records.indices {
                        end += KeyColumns.weight(keyLength: Int(records[index].keyLength), valueLength: Int(records[index].valueLength))
                        ends[index] = end
                    }
                }
            }
        } else {
            // Keys in rows are read where they lie, in the raw section.
            try sections.rawKeys(into: &keyBytes)
            let parsed = try keyBytes.withUnsafeBytes { raw in
                Result { () throws(EntryFile.Damage) -> (records: [Fields], ends: [Int], spaces: [Space]) in
                    var reader = try KeysReader(raw, count: sections.count)
                    var records: [Fields] = []
                    var ends: [Int] = []
                    records.reserveCapacity(sections.count)
                    ends.reserveCapacity(sections.count)
                    for _ in 0 ..< sections.count {
                        records.append(try reader.readFields())
                        ends.append(reader.offset + reader.valuesEnd)
                    }
                    guard reader.remaining == 0 else { throw .lengthMismatch(expected: raw.count - reader.remaining, actual: raw.count) }
                    return (records, ends, reader.spaces)
                }
            }.get()
            (records, ends, spaces) = parsed
        }
        let ends = ends
        records.withUnsafeMutableBufferPointer { records in
            var index = 0
            SegmentBlock.share(block.count, byEnds: ends) { share in
                records[index].share = UInt32(share)
                index += 1
            }
        }
        let valuesLength = records.reduce(0) { $0 + Int($1.valueLength) }
        guard valuesLength == sections.valuesRaw else { throw .lengthMismatch(expected: sections.valuesRaw, actual: valuesLength) }
    }

    /// The records of `headers` (a block of version 3, or a record of
    /// version 2 alone), with their shares.
    package init(headers: [EntryFile.Header], shares: [Int]) {
        var keyBytes: [UInt8] = []
        var spaces: [Space] = []
        var records: [Fields] = []
        for (header, share) in zip(headers, shares) {
            let space = spaces.firstIndex { $0.name == header.space && $0.kind == header.kind } ?? spaces.count
            if space == spaces.count { spaces.append(Space(name: header.space, kind: header.kind)) }
            records.append(Fields(
                expiry: header.expiry, sequence: header.sequence, keyStart: UInt32(keyBytes.count), keyLength: UInt32(header.key.utf8.count),
                valueLength: UInt32(clamping: header.rawLength), share: UInt32(clamping: share), space: UInt16(space),
                isTombstone: header.isTombstone
            ))
            keyBytes += header.key.utf8
        }
        self.init(records: records, keyBytes: keyBytes, spaces: spaces, headers: headers)
    }

    private init(records: [Fields], keyBytes: [UInt8], spaces: [Space], headers: [EntryFile.Header]) {
        self.records = records
        self.keyBytes = keyBytes
        self.spaces = spaces
        self.headers = headers
    }

    /// `record`'s key.
    package func key(of record: Fields) -> String {
        Self.key(of: record, in: keyBytes)
    }

    /// `record`'s key, made from its range of `keyBytes`.
    static func key(of record: Fields, in keyBytes: [UInt8]) -> String {
        // Through a buffer of `UInt8`: a slice of raw bytes took the generic path, a copy a key.
        keyBytes.withUnsafeBufferPointer { bytes in
            String(decoding: UnsafeBufferPointer(rebasing: bytes[Int(record.keyStart) ..< Int(record.keyStart + record.keyLength)]), as: UTF8.self)
        }
    }

    /// Record `index` as a file of its own would give its header.
    package func header(_ index: Int) -> EntryFile.Header {
        if let headers { return headers[index] }
        let record = records[index]
        return record.header(key: key(of: record), space: spaces[Int(record.space)])
    }

    /// Where each record's value is in the block's raw values section.
    package func valueRanges() -> [Range<Int>] {
        var start = 0
        return records.map { record in
            defer { start += Int(record.valueLength) }
            return start ..< start + Int(record.valueLength)
        }
    }
}
