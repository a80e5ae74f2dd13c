/// Where a record is on disk: in a segment file, or in a file of its own.
///
/// The index keeps it as `place` and `length` without looking inside (it
/// asks only `isOwnFile`, for the disk budget's charge); the record store
/// and the manifest's format take it apart.
package struct RecordLocation: Sendable, Equatable {
    /// The segment file's number in the high 32 bits and the record's offset
    /// in it in the low 32; 0 for a file of its own.
    package let place: UInt64
    /// The record's length: the whole file, for a file of its own.
    package let length: Int

    package init(place: UInt64, length: Int) {
        self.place = place
        self.length = length
    }

    /// The record at `offset` in segment file `segment` (0: a file of its own).
    package init(segment: UInt32, offset: UInt32, length: Int) {
        self.init(place: UInt64(segment) << 32 | UInt64(offset), length: length)
    }

    /// The whole file of its own, of `length` bytes.
    package static func ownFile(length: Int) -> RecordLocation { RecordLocation(place: 0, length: length) }

    package var segment: UInt32 { UInt32(truncatingIfNeeded: place >> 32) }
    package var offset: UInt32 { UInt32(truncatingIfNeeded: place) }
    package var isOwnFile: Bool { segment == 0 }
}
