import Foundation
import Kache
import KacheStorage
import KacheWorkloads
import Testing
@testable import KacheBench

/// The append floor writes what Kache's records of the same entries take.
@Suite("The append floor")
struct AppendFloorTests {
    @Test func recordsAreAsLongAsKachesOwnForTheSameEntries() throws {
        let folder = BenchProcess.scratchRoot.appendingPathComponent("kache-bench-append-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }

        let inputs = WorkloadInputs(sizes: .quick, seed: 42)
        let keys = Array(inputs.loadKeys.prefix(200))
        let values = Array(inputs.loadValues.prefix(200))
        let small = inputs.manySmallSets()
        let floor = try AppendBaseline(path: folder.appendingPathComponent("records").path)
        let threshold = Kache.Configuration().compressionThreshold
        #expect(threshold == AppendBaseline.compressionThreshold, "the floor compresses what Kache compresses")
        let entries = Array(zip(keys, values)) + Array(zip(small.keys.prefix(200), small.values.prefix(200)))
        for (key, value) in entries {
            let length = try floor.append(value, forKey: key, expiry: 0)
            #expect(length == EntryCodec.encode(value, forKey: key, compressionThreshold: threshold).count, "\(key) of \(value.count) bytes")
        }
        try floor.close()
    }

    @Test func appendWritesTimeEveryRecordAndReportTheBytes() throws {
        let folder = BenchProcess.scratchRoot.appendingPathComponent("kache-bench-append-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let inputs = WorkloadInputs(sizes: .quick, seed: 42)
        let progress = ProgressLine(shown: false)
        let (seconds, bytes) = try Baselines.appendWrites(
            keys: inputs.loadKeys, values: inputs.loadValues, expiries: { Int64($0) }, folder: folder.path, progress: progress
        )
        #expect(seconds > 0)
        let file = try FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent("records").path)
        #expect((file[.size] as? Int) == bytes)
        #expect(bytes > 5_000 * 59 && bytes < 5_000 * 1_024 / 3, "5,000 records of a 48-byte header, an 11-byte key and a compressed 1 KiB value")
    }
}
