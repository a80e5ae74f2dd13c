import Foundation
import KacheStorage

/// The snapshot `save()` writes: every key space (name, kind, capacity,
/// counters), the checkpoint, the entries in files of their own, and the
/// versions of the entries settled in segment files, so that opening a
/// directory rebuilds the index from the manifest and the segments' keys
/// sections (`SegmentBlock.headers`), without decompressing a value. Specified in docs/FORMAT.md.
///
/// ```
/// magic "KMAN" · checksum u64 (XXH64 of everything after it) · version u16 · reserved u16
/// savedAt i64 · nextSequence u64 · diskBudget i64 (0: none) · spaceCount u32
/// per space: name (u16 length + UTF-8) · kind u8 · capacity i64
///            evictions u64 · expirations u64 · pushes u64 · pops u64 · entryCount u32
///   per entry: key (u16 length + UTF-8) · expiry i64 · sequence u64 · rawSize u32 · fileSize u32
///              place u64 · diskSequence u64 (place: a `RecordLocation`'s, 0 for a file of
///              its own; diskSequence: the version at that location, older than
///              `sequence` while the newer one was still being written)
/// the settled entries' sequences, as runs (`SettledSequences`)
/// ```
///
/// The entries listed are those not settled in a segment: in a file of their
/// own, or with a version still being written. A settled entry is listed by
/// its sequence alone, which names its record wherever compaction moved it
/// (a place would name the copy compaction deleted after the checkpoint).
///
/// `nextSequence` is also the checkpoint: every record with a lower sequence
/// is live if and only if the manifest lists it or its sequence. Versions 6
/// and 7 have version 5's fields: their numbers say that the segments'
/// blocks may keep their keys in columns (`KeyColumns`, version 6) and a
/// checksum of their keys (version 7), which earlier readers do not know. Version 4
/// (the settled sequences one varint each), version 3 (every entry listed,
/// nothing after the key spaces), version 2 (segment u32 · offset u32 where
/// version 3 has the place) and version 1 (no locations, every entry in a
/// file of its own) are still read.
struct Manifest: Sendable, Equatable {
    struct Space: Sendable, Equatable {
        var name: String
        var kind: KeySpace.Kind
        var capacity: Int
        var counters: KeySpaceCounters
        var entries: [Entry]
    }

    struct Entry: Sendable, Equatable {
        var key: String
        var expiry: Timestamp
        var sequence: UInt64
        var rawSize: Int
        var fileSize: Int
        /// `RecordLocation.place`: 0 for a file of its own.
        var place: UInt64 = 0
        /// The version at `place`; `sequence` unless a newer one was still being written.
        var diskSequence: UInt64 = 0

        var location: RecordLocation { RecordLocation(place: place, length: fileSize) }

        /// Whether the listed version was still being written: it has no
        /// record yet, or its location holds an older version (version 1
        /// manifests leave `diskSequence` 0).
        var isPending: Bool { fileSize == 0 || diskSequence != 0 && diskSequence != sequence }
    }

    /// Whether some entry's version was still being written when the
    /// manifest was saved: it then describes no state the files were ever
    /// in, and only serves as the rebuild's checkpoint.
    var listsPendingVersion: Bool {
        spaces.contains { $0.entries.contains(where: \.isPending) }
    }

    /// Why a manifest was not used.
    enum Damage: Error, Equatable, CustomStringConvertible {
        case badMagic, checksumMismatch, unsupportedVersion(UInt16), malformed

        var description: String {
            switch self {
            case .badMagic: return "not a Kache manifest (bad magic)"
            case .checksumMismatch: return "manifest checksum mismatch"
            case let .unsupportedVersion(v): return "manifest version \(v) is not supported"
            case .malformed: return "manifest is truncated or malformed"
            }
        }
    }

    static let magic: [UInt8] = Array("KMAN".utf8)
    static let version: UInt16 = 7
    static let readableVersions: ClosedRange<UInt16> = 1 ... 7
    static let checksumOffset = 4
    /// Where the bytes the checksum covers begin.
    static let bodyOffset = 12
    /// The fixed parts of the layout: the header, a key space without its
    /// name, an entry without its key (in the version written).
    static let headerLength = 4 + 8 + 2 + 2 + 8 + 8 + 8 + 4
    static let smallestSpace = 2 + 1 + 8 + 4 * 8 + 4
    static let smallestEntry = smallestEntry(version: version)
    private static func smallestEntry(version: UInt16) -> Int { version == 1 ? 2 + 8 + 8 + 4 + 4 : 2 + 8 + 8 + 4 + 4 + 4 + 4 + 8 }

    var savedAt: Timestamp
    var nextSequence: UInt64
    /// The disk budget of the instance that saved it (for `kache inspect`).
    var diskBudget: Int?
    var spaces: [Space]
    /// The sequences of the settled entries (their current versions, written
    /// in segments); empty in versions before 4, which list every entry.
    var settled: SettledSequences

    /// The length of `encoded()` for key spaces whose names take
    /// `spaceNameBytes` in all, listing `entries` entries whose keys take
    /// `keyBytes`, and the settled sequences' `settledBytes` (`SettledSequences.encoded`).
    static func encodedLength(
        spaceNameBytes: Int, spaces: Int, entries: Int, keyBytes: Int, settledBytes: Int = SettledSequences.emptyLength
    ) -> Int {
        headerLength + spaces * smallestSpace + spaceNameBytes + entries * smallestEntry + keyBytes + settledBytes
    }

    /// The manifest's bytes.
    /// - Complexity: O(entries)
    func encoded() -> [UInt8] {
        let summaries = spaces.map { space in
            ManifestEncoder.Space(
                name: space.name, kind: space.kind, capacity: space.capacity, counters: space.counters,
                entryCount: space.entries.count, keyBytes: space.entries.reduce(0) { $0 + $1.key.utf8.count }
            )
        }
        return ManifestEncoder.encode(
            savedAt: savedAt, nextSequence: nextSequence, diskBudget: diskBudget, spaces: summaries, settled: settled.encoded()
        ) { emit in
            for (index, space) in spaces.enumerated() {
                for entry in space.entries { emit(index, entry) }
            }
        }
    }

    /// Decodes and verifies a manifest. Never traps on hostile input: counts are
    /// checked against the bytes that remain before anything is allocated.
    /// - Complexity: O(n) in its length.
    init(decoding bytes: UnsafeRawBufferPointer) throws(Damage) {
        guard bytes.count >= Manifest.bodyOffset, bytes.prefix(4).elementsEqual(Manifest.magic) else { throw .badMagic }
        let stored = UInt64(littleEndian: bytes.loadUnaligned(fromByteOffset: Manifest.checksumOffset, as: UInt64.self))
        guard stored == XXHash64.hash(UnsafeRawBufferPointer(rebasing: bytes[Manifest.bodyOffset...])) else {
            throw .checksumMismatch
        }
        var reader = BinaryReader(bytes, offset: Manifest.bodyOffset)
        do {
            let version = try reader.read(UInt16.self)
            guard Manifest.readableVersions.contains(version) else { throw Damage.unsupportedVersion(version) }
            _ = try reader.read(UInt16.self)
            savedAt = try reader.read()
            nextSequence = try reader.read()
            // Past it, the next write could not be indexed.
            guard nextSequence <= EntryFile.largestSequence + 1 else { throw Damage.malformed }
            let budget = try reader.read(Int64.self)
            guard budget >= 0 else { throw Damage.malformed }
            diskBudget = budget == 0 ? nil : Int(budget)
            let spaceCount = Int(try reader.read(UInt32.self))
            guard spaceCount <= reader.remaining / Manifest.smallestSpace else { throw Damage.malformed }
            spaces = []
            spaces.reserveCapacity(spaceCount)
            var names = Set<String>()
            for _ in 0 ..< spaceCount {
                let name = try reader.readShortString()
                guard let kind = KeySpace.Kind(rawValue: try reader.read()), names.insert(name).inserted else { throw Damage.malformed }
                let capacity = Int(try reader.read(Int64.self))
                guard capacity > 0 else { throw Damage.malformed }
                let counters = KeySpaceCounters(
                    evictions: try reader.read(), expirations: try reader.read(),
                    pushes: try reader.read(), pops: try reader.read()
                )
                let entryCount = Int(try reader.read(UInt32.self))
                guard entryCount <= reader.remaining / Manifest.smallestEntry(version: version) else { throw Damage.malformed }
                var entries: [Entry] = []
                entries.reserveCapacity(entryCount)
                for _ in 0 ..< entryCount {
                    let key = try reader.readShortString()
                    guard !key.isEmpty else { throw Damage.malformed }
                    var entry = Entry(
                        key: key, expiry: try reader.read(), sequence: try reader.read(),
                        rawSize: Int(try reader.read(UInt32.self)), fileSize: Int(try reader.read(UInt32.self))
                    )
                    entry.diskSequence = entry.sequence
                    if version >= 3 {
                        entry.place = try reader.read()
                        entry.diskSequence = try reader.read()
                    } else if version == 2 {
                        let segment = try reader.read(UInt32.self)
                        let offset = try reader.read(UInt32.self)
                        guard offset < RecordLocation.offsetLimit else { throw Damage.malformed }
                        entry.place = segment == 0 ? 0 : RecordLocation(segment: segment, offset: Int(offset), length: 0).place
                        entry.diskSequence = try reader.read()
                    }
                    entries.append(entry)
                }
                spaces.append(Space(name: name, kind: kind, capacity: capacity, counters: counters, entries: entries))
            }
            switch version {
            case 5, 6, 7: settled = try SettledSequences(decodingRuns: &reader)
            case 4: settled = try SettledSequences(decodingSteps: &reader)
            default: settled = SettledSequences()
            }
            guard reader.remaining == 0 else { throw Damage.malformed }
        } catch let damage as Damage {
            throw damage
        } catch {
            throw .malformed
        }
    }

    init(savedAt: Timestamp, nextSequence: UInt64, diskBudget: Int? = nil, spaces: [Space], settled: SettledSequences = SettledSequences()) {
        self.savedAt = savedAt
        self.nextSequence = nextSequence
        self.diskBudget = diskBudget
        self.spaces = spaces
        self.settled = settled
    }

    /// The settled versions, to ask about once per record found.
    var settledVersions: SettledVersions { SettledVersions(settled) }
}

extension Manifest.Entry {
    /// An entry whose version on disk, if any, is at `location`.
    init(key: String, expiry: Timestamp, sequence: UInt64, rawSize: Int, location: RecordLocation?, diskSequence: UInt64) {
        self.init(
            key: key, expiry: expiry, sequence: sequence, rawSize: rawSize, fileSize: location?.length ?? 0,
            place: location?.place ?? 0, diskSequence: diskSequence
        )
    }
}
