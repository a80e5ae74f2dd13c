/// Where a record is on disk: in a block of a segment file, a record of
/// version 2 in a segment file, or a file of its own.
///
/// The index keeps it as `place` and `length` without looking inside (it
/// asks only `isOwnFile`, for the disk budget's charge); the record store
/// and the manifest's format take it apart.
///
/// Public and inlinable, where the rest of this target is `package` (as
/// `Locked` and `BinaryReader` are): an open makes and asks a million of
/// them in the engine, and Swift 6.3 inlines no `package` declaration into
/// another module, `@inlinable` or not; each init and `isOwnFile` stayed a
/// call (callgrind, W8's open: 56 instructions a record in all).
/// `KacheStorage` is no product, so users still can't see it.
public struct RecordLocation: Sendable, Equatable, Hashable {
    /// The segment file's number in the high 32 bits, the offset of the
    /// record's block (or version-2 record) in the next 24, and the record's
    /// index in its block in the low 8; 0 for a file of its own.
    public let place: UInt64
    /// What the record costs on disk: the whole file for a file of its own,
    /// the record for version 2, and its share of its block for a block's
    /// record (the shares of a block add up to its length).
    public let length: Int

    /// Segment files end before this offset (`SegmentStore.maximumLength` is at most 16 MiB).
    @inlinable public static var offsetLimit: Int { 1 << 24 }

    @inlinable public init(place: UInt64, length: Int) {
        self.place = place
        self.length = length
    }

    /// Record `index` of the block (or the version-2 record, index 0) at
    /// `offset` in segment file `segment` (0: a file of its own). The index
    /// has 8 bits (a block holds at most `SegmentBlock.maximumRecords`).
    @inlinable public init(segment: UInt32, offset: Int, index: Int = 0, length: Int) {
        precondition(offset >= 0 && offset < Self.offsetLimit && index >= 0 && index <= 0xFF)
        self.init(place: UInt64(segment) << 32 | UInt64(offset) << 8 | UInt64(index), length: length)
    }

    /// The whole file of its own, of `length` bytes.
    @inlinable public static func ownFile(length: Int) -> RecordLocation { RecordLocation(place: 0, length: length) }

    @inlinable public var segment: UInt32 { UInt32(truncatingIfNeeded: place >> 32) }
    /// Where the record's block (or the version-2 record) starts in the segment.
    @inlinable public var offset: Int { Int(truncatingIfNeeded: place >> 8 & 0xFF_FFFF) }
    /// The record's index in its block.
    @inlinable public var index: Int { Int(truncatingIfNeeded: place & 0xFF) }
    @inlinable public var isOwnFile: Bool { segment == 0 }
}
