import Foundation

/// The on-disk format of one entry: a fixed 48-byte header, the key, the key
/// space's name, then the payload (LZ4 block or raw). Specified in docs/FORMAT.md.
///
/// ```
/// offset size field
///  0      4   magic "KACH"
///  4      8   checksum: XXH64 (seed 0) of bytes 12 ..< end of file
/// 12      2   format version (2; version 1 records read the same)
/// 14      2   flags (bit 0: payload is LZ4-compressed; bit 1: tombstone)
/// 16      8   expiry, Int64 nanoseconds since 1970-01-01T00:00:00Z
/// 24      8   sequence, UInt64 write order within the cache directory
/// 32      4   raw payload length
/// 36      4   stored payload length
/// 40      2   key length (UTF-8 bytes)
/// 42      2   key-space name length (UTF-8 bytes)
/// 44      1   key-space kind (0 top level, 1 Pool, 2 Queue)
/// 45      3   reserved, zero
/// 48      …   key, key-space name, payload
/// ```
/// All integers are little-endian. The checksum covers everything after it,
/// so a flipped bit anywhere but in the magic is caught, and the magic is
/// compared literally.
///
/// The same record is a per-key file on its own or one of many in a segment
/// file (`SegmentStore`). A tombstone (no payload) says that the key's older
/// records are dead: recovery after a crash replays records in sequence order.
package enum EntryFile {
    package static let magic: [UInt8] = Array("KACH".utf8)
    /// The version written. Version 2 added tombstones and segment files.
    package static let version: UInt16 = 2
    package static let readableVersions: ClosedRange<UInt16> = 1 ... 2
    package static let headerSize = 48
    /// The largest payload the 32-bit length fields can describe.
    package static let maximumPayload = Int(UInt32.max)
    /// The key-space kinds the format defines (docs/FORMAT.md: top level,
    /// Pool, Queue); a record with another is damaged.
    package static let kinds: ClosedRange<UInt8> = 0 ... 2

    package enum Offset {
        package static let checksum = 4
        package static let checksummed = 12
        package static let version = 12
        package static let flags = 14
        package static let expiry = 16
        package static let sequence = 24
        package static let rawLength = 32
        package static let storedLength = 36
        package static let keyLength = 40
        package static let spaceLength = 42
        package static let kind = 44
    }

    /// Header flags.
    package struct Flags: OptionSet, Sendable {
        package let rawValue: UInt16
        package init(rawValue: UInt16) { self.rawValue = rawValue }
        package static let compressed = Flags(rawValue: 1 << 0)
        package static let tombstone = Flags(rawValue: 1 << 1)
        package static let known: Flags = [.compressed, .tombstone]
    }

    /// Everything the header says about an entry, without its payload.
    package struct Header: Sendable, Equatable {
        package var flags: Flags
        package var expiry: Timestamp
        package var sequence: UInt64
        package var rawLength: Int
        package var storedLength: Int
        package var key: String
        package var space: String
        /// The key space's kind, one of `EntryFile.kinds`; what each means is the engine's.
        package var kind: UInt8

        package var isTombstone: Bool { flags.contains(.tombstone) }

        /// The whole file's length in bytes.
        package var fileLength: Int {
            EntryFile.headerSize + key.utf8.count + space.utf8.count + storedLength
        }
    }

    /// An encoded file whose sequence number and checksum are filled in once the
    /// sequence is known, so that the expensive part (compression) happens before
    /// the cache's lock is taken and the cheap part after.
    package struct Draft: Sendable {
        package fileprivate(set) var bytes: Data
        package let storedLength: Int
        package let isCompressed: Bool

        /// Writes the sequence number and then the checksum over the finished file.
        package mutating func seal(sequence: UInt64) {
            bytes.withUnsafeMutableBytes { raw in
                raw.storeBytes(of: sequence.littleEndian, toByteOffset: Offset.sequence, as: UInt64.self)
                let checksum = XXHash64.hash(UnsafeRawBufferPointer(rebasing: raw[Offset.checksummed...]))
                raw.storeBytes(of: checksum.littleEndian, toByteOffset: Offset.checksum, as: UInt64.self)
            }
        }
    }

    /// A sealed tombstone for `name`: its older records are dead. `expiry` is
    /// that of the record it ends.
    package static func tombstone(name: EntryName, kind: UInt8, expiry: Timestamp, sequence: UInt64) -> Data {
        var draft = draft(name: name, kind: kind, payload: Data(), expiry: expiry, compressionThreshold: .max)
        draft.bytes.withUnsafeMutableBytes { out in
            out.storeBytes(of: Flags.tombstone.rawValue.littleEndian, toByteOffset: Offset.flags, as: UInt16.self)
        }
        draft.seal(sequence: sequence)
        return draft.bytes
    }

    /// The length the header at the start of `bytes` gives its record, or nil
    /// when it does not start with the magic. Nothing else is checked.
    package static func recordLength(at bytes: UnsafeRawBufferPointer) -> Int? {
        guard bytes.count >= headerSize, bytes.prefix(4).elementsEqual(magic) else { return nil }
        func field<T: FixedWidthInteger>(_ offset: Int, _: T.Type) -> Int {
            Int(T(littleEndian: bytes.loadUnaligned(fromByteOffset: offset, as: T.self)))
        }
        return headerSize + field(Offset.keyLength, UInt16.self) + field(Offset.spaceLength, UInt16.self)
            + field(Offset.storedLength, UInt32.self)
    }

    /// Payloads at least this long are probed before LZ4 runs on all of them.
    package static let probedLength = 64 * 1024
    /// How much of a probed payload LZ4 tries first.
    package static let probeLength = 8 * 1024

    /// Whether LZ4 is worth running on the whole of `payload`: false when it
    /// is long and its first ``probeLength`` bytes don't shrink. Large values
    /// in a cache are mostly images, video and archives, compressed already;
    /// LZ4 would read every byte of them only to give up, which made writing
    /// W6's 256 KiB blobs cost more than the checksum and the copy together.
    /// The price: a long value that starts incompressible and turns
    /// compressible later is stored raw. `scratch` (at least ``probeLength``
    /// bytes) is overwritten.
    private static func mayShrink(_ payload: UnsafeRawBufferPointer, scratch: UnsafeMutableRawBufferPointer) -> Bool {
        guard payload.count >= probedLength else { return true }
        let probe = UnsafeRawBufferPointer(rebasing: payload[..<probeLength])
        return LZ4.compress(probe, into: UnsafeMutableRawBufferPointer(rebasing: scratch[..<(probeLength - 1)])) != nil
    }

    /// Lays out a file for `payload`, compressing it when it is at least
    /// `compressionThreshold` bytes and LZ4 makes it smaller (for a payload of
    /// 64 KiB or more, when LZ4 shrinks its first 8 KiB, see `mayShrink`);
    /// otherwise the payload is stored raw, so no file is ever larger than
    /// header + names + raw payload.
    /// - Complexity: O(n) in the payload, one allocation.
    package static func draft(name: EntryName, kind: UInt8, payload: Data, expiry: Timestamp, compressionThreshold: Int) -> Draft {
        let key = name.canonicalKey.utf8
        let space = name.space.utf8
        let payloadOffset = headerSize + key.count + space.count
        var file = Data(count: payloadOffset + payload.count)
        var storedLength = payload.count
        var compressed = false
        file.withUnsafeMutableBytes { out in
            out.copyBytes(from: magic)
            out.storeBytes(of: version.littleEndian, toByteOffset: Offset.version, as: UInt16.self)
            out.storeBytes(of: expiry.littleEndian, toByteOffset: Offset.expiry, as: Int64.self)
            out.storeBytes(of: UInt32(payload.count).littleEndian, toByteOffset: Offset.rawLength, as: UInt32.self)
            out.storeBytes(of: UInt16(key.count).littleEndian, toByteOffset: Offset.keyLength, as: UInt16.self)
            out.storeBytes(of: UInt16(space.count).littleEndian, toByteOffset: Offset.spaceLength, as: UInt16.self)
            out.storeBytes(of: kind, toByteOffset: Offset.kind, as: UInt8.self)
            UnsafeMutableRawBufferPointer(rebasing: out[headerSize...]).copyBytes(from: key)
            UnsafeMutableRawBufferPointer(rebasing: out[(headerSize + key.count)...]).copyBytes(from: space)
            let destination = UnsafeMutableRawBufferPointer(rebasing: out[payloadOffset...])
            payload.withUnsafeBytes { source in
                // The destination is one byte short of raw, so LZ4 succeeds only when it saves space.
                if payload.count >= max(compressionThreshold, 13), mayShrink(source, scratch: destination),
                   let length = LZ4.compress(source, into: UnsafeMutableRawBufferPointer(rebasing: destination.dropLast()))
                {
                    storedLength = length
                    compressed = true
                } else if !source.isEmpty {
                    destination.copyMemory(from: source)
                }
            }
            let flags: Flags = compressed ? .compressed : []
            out.storeBytes(of: flags.rawValue.littleEndian, toByteOffset: Offset.flags, as: UInt16.self)
            out.storeBytes(of: UInt32(storedLength).littleEndian, toByteOffset: Offset.storedLength, as: UInt32.self)
        }
        if compressed { file.count = payloadOffset + storedLength }
        return Draft(bytes: file, storedLength: storedLength, isCompressed: compressed)
    }
}
