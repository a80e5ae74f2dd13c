/// Where a record is on disk: in a segment file, or (segment 0) in a file of its own.
/// The index holds it without looking inside; only the record store reads it.
package struct RecordLocation: Sendable, Equatable {
    package var segment: UInt32
    package var offset: UInt32
    package var length: Int

    package init(segment: UInt32, offset: UInt32, length: Int) {
        self.segment = segment
        self.offset = offset
        self.length = length
    }

    package var isOwnFile: Bool { segment == 0 }

    /// The whole file of its own, of `length` bytes.
    package static func ownFile(length: Int) -> RecordLocation { RecordLocation(segment: 0, offset: 0, length: length) }
}
