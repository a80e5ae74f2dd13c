import Foundation
import KacheStorage
import Testing
@testable import Kache

@Suite struct ManifestTests {
    let manifest = Manifest(savedAt: 99, nextSequence: 1000, diskBudget: 1 << 30, spaces: [
        .init(name: "", kind: .topLevel, capacity: .max, counters: .init(), entries: [
            .init(key: "a", expiry: 10, sequence: 1, rawSize: 100, fileSize: 160),
            .init(key: "café", expiry: 20, sequence: 2, rawSize: 0, fileSize: 52),
        ]),
        .init(name: "avatars", kind: .pool, capacity: 500, counters: .init(evictions: 3, expirations: 4, pushes: 0, pops: 0), entries: []),
        .init(name: "jobs", kind: .queue, capacity: 10, counters: .init(evictions: 0, expirations: 0, pushes: 9, pops: 8), entries: [
            .init(key: "17", expiry: 30, sequence: 17, rawSize: 5, fileSize: 60),
        ]),
    ], liveSequences: [0, 3, 4, 5, 900, 1 << 40])

    func decode(_ bytes: [UInt8]) -> Result<Manifest, Manifest.Damage> {
        bytes.withUnsafeBytes { raw in Result { () throws(Manifest.Damage) in try Manifest(decoding: raw) } }
    }

    @Test func roundTrips() throws {
        #expect(try decode(manifest.encoded()).get() == manifest)
    }

    /// The index hands entries over shard by shard, key spaces mixed; each
    /// lands in its own key space's place, in the order it came.
    @Test func entriesHandedOverInAnyOrderLandInTheirKeySpace() throws {
        let summaries = manifest.spaces.map { space in
            ManifestEncoder.Space(
                name: space.name, kind: space.kind, capacity: space.capacity, counters: space.counters,
                entryCount: space.entries.count, keyBytes: space.entries.reduce(0) { $0 + $1.key.utf8.count }
            )
        }
        let mixed = [(2, manifest.spaces[2].entries[0]), (0, manifest.spaces[0].entries[0]), (0, manifest.spaces[0].entries[1])]
        var reversed = Array(manifest.liveSequences.reversed())
        let live = Manifest.encodeLiveSequences(&reversed)
        let bytes = ManifestEncoder.encode(savedAt: 99, nextSequence: 1000, diskBudget: 1 << 30, spaces: summaries, liveSequences: live) { emit in
            for (space, entry) in mixed { emit(space, entry) }
        }
        #expect(bytes == manifest.encoded())
        #expect(try decode(bytes).get() == manifest)
        #expect(bytes.count == Manifest.encodedLength(spaceNameBytes: 11, spaces: 3, entries: 3, keyBytes: 8, liveSequenceBytes: live.count))
    }

    /// A settled entry's version is found, and no other: spread thin (a
    /// search of the sorted list) or dense (a bitmap over their range).
    @Test(arguments: [[UInt64]([0, 3, 4, 5, 900, 1 << 40]), [10, 11, 13, 70, 127, 128, 200]])
    func settledVersionsAreFoundAndNothingElseIs(_ sequences: [UInt64]) throws {
        var saved = manifest
        saved.liveSequences = sequences
        let settled = try decode(saved.encoded()).get().settledVersions
        for sequence in UInt64(0) ... 1000 {
            #expect(settled.contains(sequence) == sequences.contains(sequence), "\(sequence)")
        }
        #expect(settled.contains(sequences.last!) && !settled.contains(sequences.last! + 1) && !settled.contains(.max))
    }

    /// Version 3 listed every entry and no places: it is read, and lists no places.
    @Test func aVersion3ManifestIsRead() throws {
        var version3 = manifest
        version3.liveSequences = []
        var bytes = version3.encoded()
        // Version 3 is version 4 without the count of live sequences that ends it.
        #expect(bytes.suffix(4) == [0, 0, 0, 0])
        bytes.removeLast(4)
        bytes[12] = 3
        let checksum = bytes.withUnsafeBytes { XXHash64.hash(UnsafeRawBufferPointer(rebasing: $0[12...])) }
        withUnsafeBytes(of: checksum.littleEndian) { for (i, b) in $0.enumerated() { bytes[4 + i] = b } }
        let decoded = try decode(bytes).get()
        #expect(decoded == version3)
    }

    @Test func anyFlippedByteOrTruncationIsRejected() {
        let bytes = manifest.encoded()
        for index in bytes.indices {
            var damaged = bytes
            damaged[index] ^= 0x5A
            #expect(throws: Manifest.Damage.self) { try decode(damaged).get() }
        }
        for length in 0 ..< bytes.count {
            #expect(throws: Manifest.Damage.self) { try decode(Array(bytes.prefix(length))).get() }
        }
    }

    @Test func hostileCountsDoNotAllocate() {
        // A valid checksum over a body that claims four billion key spaces.
        var writer = BinaryWriter()
        for byte in Manifest.magic { writer.write(byte) }
        writer.write(UInt64(0))
        writer.write(Manifest.version)
        writer.write(UInt16(0))
        writer.write(Int64(0))
        writer.write(UInt64(1))
        writer.write(Int64(0))
        writer.write(UInt32.max)
        var bytes = writer.bytes
        let checksum = bytes.withUnsafeBytes { XXHash64.hash(UnsafeRawBufferPointer(rebasing: $0[12...])) }
        withUnsafeBytes(of: checksum.littleEndian) { for (i, b) in $0.enumerated() { bytes[4 + i] = b } }
        #expect(throws: Manifest.Damage.malformed) { try decode(bytes).get() }
    }
}
