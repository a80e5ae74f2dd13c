import Foundation
import KacheStorage

/// Lays a manifest (docs/FORMAT.md) out in one buffer of its exact length,
/// each entry written straight to its key space's place.
///
/// Why not build a `Manifest` and encode that: at a million entries the
/// value alone (64 bytes an entry) and a buffer grown by doubling from a
/// short guess came to more than the index itself while `save()` ran, and
/// W8's peak RSS was about twice its RSS after `save()` (docs/MEMORY.md).
/// Here the caller says first how many entries each key space has and how
/// many bytes their keys take, then hands over the entries in any order
/// (the index visits them shard by shard, not key space by key space), and
/// the settled sequences, already encoded, go last.
enum ManifestEncoder {
    /// A key space as the manifest lists it, and the size of its entries.
    struct Space {
        var name: String
        var kind: KeySpace.Kind
        var capacity: Int
        var counters: KeySpaceCounters
        var entryCount: Int
        /// The UTF-8 bytes of its entries' keys, summed.
        var keyBytes: Int
    }

    /// The manifest's bytes. `entries` must emit, for each key space (by its
    /// index in `spaces`), exactly its `entryCount` entries, keys of
    /// `keyBytes` in all: a mismatch is a bug of the caller's, and traps
    /// rather than write a manifest that lies.
    /// - Complexity: O(entries), one allocation of the final length.
    static func encode(
        savedAt: Timestamp, nextSequence: UInt64, diskBudget: Int?, spaces: [Space], settled: [UInt8],
        entries: ((_ space: Int, _ entry: Manifest.Entry) -> Void) -> Void
    ) -> [UInt8] {
        let length = Manifest.encodedLength(
            spaceNameBytes: spaces.reduce(0) { $0 + $1.name.utf8.count }, spaces: spaces.count,
            entries: spaces.reduce(0) { $0 + $1.entryCount }, keyBytes: spaces.reduce(0) { $0 + $1.keyBytes },
            settledBytes: settled.count
        )
        return [UInt8](unsafeUninitializedCapacity: length) { buffer, initialized in
            let base = UnsafeMutableRawPointer(buffer.baseAddress!)
            var header = Cursor(base: base, offset: 0)
            header.write(Manifest.magic)
            header.write(UInt64(0))   // the checksum, once the rest is written
            header.write(Manifest.version)
            header.write(UInt16(0))
            header.write(savedAt)
            header.write(nextSequence)
            header.write(Int64(diskBudget ?? 0))
            header.write(UInt32(spaces.count))

            // Each key space's header, then a cursor where its entries go.
            var cursors: [Cursor] = []
            var ends: [Int] = []
            for space in spaces {
                header.writeShortString(space.name)
                header.write(space.kind.rawValue)
                header.write(Int64(clamping: space.capacity))
                header.write(space.counters.evictions)
                header.write(space.counters.expirations)
                header.write(space.counters.pushes)
                header.write(space.counters.pops)
                header.write(UInt32(space.entryCount))
                cursors.append(header)
                header.offset += space.entryCount * Manifest.smallestEntry + space.keyBytes
                ends.append(header.offset)
            }
            header.write(settled)
            precondition(header.offset == length)

            entries { space, entry in
                precondition(cursors[space].offset + Manifest.smallestEntry + entry.key.utf8.count <= ends[space], "more entries than counted for key space \(space)")
                cursors[space].writeShortString(entry.key)
                cursors[space].write(entry.expiry)
                cursors[space].write(entry.sequence)
                cursors[space].write(UInt32(clamping: entry.rawSize))
                cursors[space].write(UInt32(clamping: entry.fileSize))
                cursors[space].write(entry.place)
                cursors[space].write(entry.diskSequence)
            }
            precondition(cursors.map(\.offset) == ends, "fewer entries than counted")

            let body = UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer(buffer)[Manifest.bodyOffset...])
            base.storeBytes(of: XXHash64.hash(body).littleEndian, toByteOffset: Manifest.checksumOffset, as: UInt64.self)
            initialized = length
        }
    }

    /// Writes little-endian fields at a place in the buffer (stores need no alignment).
    private struct Cursor {
        let base: UnsafeMutableRawPointer
        var offset: Int

        mutating func write<T: FixedWidthInteger>(_ value: T) {
            base.storeBytes(of: value.littleEndian, toByteOffset: offset, as: T.self)
            offset += MemoryLayout<T>.size
        }

        mutating func write(_ bytes: [UInt8]) {
            bytes.withUnsafeBytes { if let source = $0.baseAddress { (base + offset).copyMemory(from: source, byteCount: $0.count) } }
            offset += bytes.count
        }

        /// A UTF-8 string prefixed by its length as a `UInt16`.
        mutating func writeShortString(_ string: String) {
            var string = string
            string.withUTF8 { utf8 in
                precondition(utf8.count <= Int(UInt16.max), "string too long for a short-string field")
                write(UInt16(utf8.count))
                if let source = utf8.baseAddress { (base + offset).copyMemory(from: source, byteCount: utf8.count) }
                offset += utf8.count
            }
        }
    }
}
