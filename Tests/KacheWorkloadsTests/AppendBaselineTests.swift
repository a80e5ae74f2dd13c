import Foundation
import KacheWorkloads
import Testing

@Suite struct AppendBaselineTests {
    private func withFolder(_ body: (String) throws -> Void) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("append-baseline-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try body(folder.path)
    }

    private func textValues(_ count: Int, bytes: Int) -> [Data] {
        var rng = SplitMix64(seed: 42)
        return (0..<count).map { WorkloadValues.text(index: $0, byteCount: bytes, using: &rng) }
    }

    /// Little-endian integer of `T` at `offset`.
    private func field<T: FixedWidthInteger>(_ data: Data, _ offset: Int, as: T.Type) -> T {
        data.withUnsafeBytes { T(littleEndian: $0.loadUnaligned(fromByteOffset: offset, as: T.self)) }
    }

    @Test func recordsAreAHeaderTheKeyAndTheLZ4PayloadBackToBack() throws {
        try withFolder { folder in
            let values = textValues(50, bytes: 1024)
            let floor = try AppendBaseline(path: folder + "/records", bufferCapacity: 4096)
            var lengths: [Int] = []
            for (index, value) in values.enumerated() {
                lengths.append(try floor.append(value, forKey: WorkloadKeys.key(index), expiry: 1_000 + Int64(index)))
            }
            try floor.close()
            try floor.close()   // a second close does nothing

            let file = try Data(contentsOf: URL(fileURLWithPath: folder + "/records"))
            #expect(file.count == lengths.reduce(0, +) && floor.bytesAppended == file.count, "every record reached the file, none twice")
            var offset = 0
            for (index, value) in values.enumerated() {
                let record = file.subdata(in: offset..<(offset + lengths[index]))
                #expect(record.prefix(4) == Data("KACH".utf8))
                #expect(field(record, 14, as: UInt16.self) == AppendBaseline.compressedFlag)
                #expect(field(record, 16, as: Int64.self) == 1_000 + Int64(index))
                #expect(field(record, 24, as: UInt64.self) == UInt64(index + 1), "sequence numbers count from 1")
                let raw = Int(field(record, 32, as: UInt32.self)), stored = Int(field(record, 36, as: UInt32.self))
                let keyCount = Int(field(record, 40, as: UInt16.self))
                #expect(raw == value.count && keyCount == 11)
                #expect(lengths[index] == AppendBaseline.recordLength(keyCount: keyCount, storedCount: stored))
                let key = record.subdata(in: AppendBaseline.headerSize..<(AppendBaseline.headerSize + keyCount))
                #expect(String(decoding: key, as: UTF8.self) == WorkloadKeys.key(index))
                let payload = record.subdata(in: (AppendBaseline.headerSize + keyCount)..<record.count)
                #expect(payload == RawLZ4Baseline.compress(value))
                #expect(RawLZ4Baseline.decompress(payload, rawCount: raw) == value)
                offset += lengths[index]
            }
        }
    }

    @Test func valuesLZ4CannotShrinkOrTooShortToTryAreStoredRaw() throws {
        try withFolder { folder in
            var rng = SplitMix64(seed: 1)
            let blob = WorkloadValues.blob(byteCount: 500, using: &rng)
            let short = Data("tiny".utf8)
            let floor = try AppendBaseline(path: folder + "/records")
            #expect(try floor.append(blob, forKey: "b", expiry: 0) == 48 + 1 + 500)
            #expect(try floor.append(short, forKey: "s", expiry: 0) == 48 + 1 + 4)
            try floor.close()
            let file = try Data(contentsOf: URL(fileURLWithPath: folder + "/records"))
            #expect(field(file, 14, as: UInt16.self) == 0)
            #expect(file.subdata(in: 49..<549) == blob)
            #expect(file.suffix(4) == short)
        }
    }

    @Test func nothingReachesTheFileBeforeTheBufferFillsOrAFlush() throws {
        try withFolder { folder in
            let path = folder + "/records"
            let floor = try AppendBaseline(path: path, bufferCapacity: 1 << 20)
            for (index, value) in textValues(10, bytes: 200).enumerated() { try floor.append(value, forKey: WorkloadKeys.key(index), expiry: 0) }
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)).isEmpty, "one write call per buffer")
            try floor.flush()
            #expect(try Data(contentsOf: URL(fileURLWithPath: path)).count == floor.bytesAppended)
            try floor.close()
        }
    }
}
