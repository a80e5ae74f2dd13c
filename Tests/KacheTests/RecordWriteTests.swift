import Foundation
import KacheStorage
import Testing

#if canImport(Glibc)
/// glibc's own measure of a block it handed out (not in the Glibc module's headers).
@_silgen_name("malloc_usable_size") private func mallocUsableSize(_ pointer: UnsafeMutableRawPointer?) -> Int
#endif

/// `RecordWrite`: the version a set hands the writer, stored flat.
@Suite struct RecordWriteTests {
    private static let bucket = SegmentStore.Bucket(shift: 5, index: 123_456)

    private static func record(key: String, sequence: UInt64 = 7) -> SegmentBlock.Record {
        SegmentBlock.Record(key: key, space: "avatars", kind: 1, expiry: 1_800_000_000_000_000_000, sequence: sequence, value: Data("value".utf8))
    }

    private static func write(_ version: RecordVersion, canonicalKey: String? = nil) -> RecordWrite {
        RecordWrite(
            version: version, canonicalKey: canonicalKey, space: "avatars", kind: 1, expiry: 1_800_000_000_000_000_000,
            value: Data("value".utf8), bucket: bucket
        )
    }

    /// A record write gives back the version, record and bucket it was made
    /// of; a key whose canonical form differs keeps both forms.
    @Test func aRecordWriteGivesBackWhatItWasMadeOf() throws {
        let version = RecordVersion(space: 3, key: "key-1", sequence: 7, indexHandle: 42)
        let write = Self.write(version)
        #expect(write.version == version)
        #expect(write.record == Self.record(key: "key-1"))
        #expect(write.bucket == Self.bucket)
        #expect(write.file == nil)
        #expect(write.rawSize == 5)
        #expect(write.weight == Self.record(key: "key-1").weight)
        #expect(write.encodedLength == Self.record(key: "key-1").largestRawLength - 5)
        #expect(write.name == EntryName(space: "avatars", key: "key-1"))

        let decomposed = "cafe\u{301}"  // NFD; the record holds the canonical "café"
        let canonical = try #require(EntryName.canonical(ifNotASCII: decomposed))
        // Strings compare by canonical equivalence: compare their bytes.
        #expect(Array(canonical.utf8) != Array(decomposed.utf8))
        let other = Self.write(RecordVersion(space: 3, key: decomposed, sequence: 7), canonicalKey: canonical)
        #expect(Array(other.version.key.utf8) == Array(decomposed.utf8), "the version lost the key as the index has it")
        #expect(other.record.map { Array($0.key.utf8) } == Array(canonical.utf8))
        #expect(other.name == EntryName(space: "avatars", key: decomposed))
    }

    /// A file of its own keeps its name, bytes and the value's length, and has no record or bucket.
    @Test func aFileWriteGivesBackWhatItWasMadeOf() {
        let version = RecordVersion(space: 0, key: "large", sequence: 9, indexHandle: nil)
        let name = EntryName(space: "", key: "large")
        let write = RecordWrite(version: version, name: name, file: Data(count: 300), rawSize: 70_000)
        #expect(write.version == version)
        #expect(write.name == name)
        #expect(write.file == Data(count: 300) && write.encodedLength == 300)
        #expect(write.rawSize == 70_000)
        #expect(write.record == nil && write.bucket == nil)
    }

    #if canImport(Glibc)
    /// A set allocates a write on its thread and the writer frees it on
    /// another: within 128 bytes, glibc frees it through the arena's
    /// lock-free lists instead of waiting for the setting thread's arena lock.
    @Test func aRecordWriteFitsGlibcsFastLists() {
        let write = Self.write(RecordVersion(space: 1, key: "key-0000001", sequence: 1, indexHandle: 1))
        // The usable size is the block's 128 bytes less malloc's 8-byte header.
        #expect(mallocUsableSize(Unmanaged.passUnretained(write).toOpaque()) <= 120)
    }
    #endif
}
