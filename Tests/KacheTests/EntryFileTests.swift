import Foundation
import KacheStorage
import Testing
@testable import Kache

@Suite struct EntryFileTests {
    let name = EntryName(space: "avatars", key: "user/42")

    func sealed(_ payload: Data, threshold: Int = 64, sequence: UInt64 = 7) -> Data {
        var draft = EntryFile.draft(name: name, kind: KeySpace.Kind.pool.rawValue, payload: payload, expiry: 1_234_567, compressionThreshold: threshold)
        draft.seal(sequence: sequence)
        return draft.bytes
    }

    func decode(_ file: Data) -> Result<(header: EntryFile.Header, payload: Data), EntryFile.Damage> {
        file.withUnsafeBytes { raw in Result { () throws(EntryFile.Damage) in try EntryFile.decode(raw) } }
    }

    /// A sequence past the largest the index can hold is damage in a file
    /// of its own and in a block alike; the largest itself reads.
    @Test func aSequencePastTheLargestIsDamage() throws {
        let largest = EntryFile.largestSequence
        #expect(try decode(sealed(compressible(100), sequence: largest)).get().header.sequence == largest)
        #expect(throws: EntryFile.Damage.sequenceOutOfRange(largest + 1)) { try decode(sealed(compressible(100), sequence: largest + 1)).get() }
        for sequence in [largest + 1, .max] {
            var builder = SegmentBlock.Builder()
            builder.append(SegmentBlock.Record(key: "k", space: "", kind: 0, expiry: 1, sequence: sequence, value: compressible(100)))
            #expect(throws: EntryFile.Damage.sequenceOutOfRange(sequence)) { try SegmentBlock.decode(builder.seal().bytes) }
        }
        #expect(IndexShard.Entry.sequenceBits == 48 && UInt64(1) << IndexShard.Entry.sequenceBits - 1 == largest)
    }

    @Test func roundTripsCompressibleData() throws {
        let payload = compressible(4096)
        let file = sealed(payload)
        let (header, decoded) = try decode(file).get()
        #expect(decoded == payload)
        #expect(header.flags.contains(.compressed))
        #expect(header.key == "user/42" && header.space == "avatars" && header.kind == KeySpace.Kind.pool.rawValue)
        #expect(header.expiry == 1_234_567 && header.sequence == 7)
        #expect(header.rawLength == 4096 && header.storedLength < 4096 / 4)
        #expect(file.count == header.fileLength)
    }

    @Test func incompressibleDataIsStoredRawNeverLarger() throws {
        for size in [0, 1, 12, 13, 100, 65_536] {
            let payload = incompressible(size)
            let file = sealed(payload)
            let (header, decoded) = try decode(file).get()
            #expect(decoded == payload)
            #expect(!header.flags.contains(.compressed))
            #expect(file.count == EntryFile.headerSize + "user/42".utf8.count + "avatars".utf8.count + size)
        }
    }

    /// A long value is probed: LZ4 runs on all of it only when its first
    /// 8 KiB shrink. Either way it reads back exactly.
    @Test func longValuesAreProbedBeforeCompressing() throws {
        let length = EntryFile.probedLength
        let compressibleHead = compressible(EntryFile.probeLength) + incompressible(length - EntryFile.probeLength)
        let incompressibleHead = incompressible(EntryFile.probeLength) + compressible(length - EntryFile.probeLength)
        let shortOfProbing = incompressible(EntryFile.probeLength) + compressible(length - 1 - EntryFile.probeLength)

        let (compressedHeader, compressedPayload) = try decode(sealed(compressibleHead)).get()
        #expect(compressedHeader.flags.contains(.compressed) && compressedPayload == compressibleHead)
        let (rawHeader, rawPayload) = try decode(sealed(incompressibleHead)).get()
        #expect(!rawHeader.flags.contains(.compressed), "an incompressible head means the whole is stored raw")
        #expect(rawHeader.storedLength == length && rawPayload == incompressibleHead)
        let (shortHeader, shortPayload) = try decode(sealed(shortOfProbing)).get()
        #expect(shortHeader.flags.contains(.compressed), "under 64 KiB, LZ4 runs on the whole")
        #expect(shortPayload == shortOfProbing)
    }

    @Test func belowThresholdIsNotCompressed() throws {
        let payload = compressible(63)
        #expect(try !decode(sealed(payload, threshold: 64)).get().header.flags.contains(.compressed))
        #expect(try decode(sealed(payload, threshold: 16)).get().header.flags.contains(.compressed))
    }

    @Test func everyFlippedBitIsCaught() {
        let file = sealed(compressible(300))
        for byte in 0 ..< file.count {
            for bit in 0 ..< 8 {
                var damaged = file
                damaged[byte] ^= UInt8(1 << bit)
                #expect(throws: EntryFile.Damage.self) { try decode(damaged).get() }
            }
        }
    }

    @Test func everyTruncationIsCaught() {
        let file = sealed(compressible(300))
        for length in 0 ..< file.count {
            #expect(throws: EntryFile.Damage.self) { try decode(file.prefix(length)).get() }
        }
        #expect(throws: EntryFile.Damage.self) { try decode(file + Data([0])).get() }
    }

    @Test func headerDecodesWithoutThePayload() throws {
        let file = sealed(compressible(5000))
        let prefixLength = EntryFile.headerSize + "user/42".utf8.count + "avatars".utf8.count
        let header = try file.prefix(prefixLength).withUnsafeBytes { raw in
            try Result { () throws(EntryFile.Damage) in try EntryFile.decodeHeader(raw, fileLength: file.count) }.get()
        }
        #expect(header.key == "user/42" && header.rawLength == 5000)
    }
}
