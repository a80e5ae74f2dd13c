import Foundation
import KacheStorage
import Testing
@testable import Kache

/// Issue 6, part 3: every input the fuzzers kept — the crashers in
/// Fuzz/regressions/ and the seeds in Fuzz/corpus/ — goes through the same
/// checks as under libFuzzer (`DecoderProperties`), on every test run.
@Suite struct FuzzRegressionTests {
    /// The repository's Fuzz/ folder, found from this file's path.
    static let fuzzFolder = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fuzz")

    @Test(arguments: ["regressions/entry-file", "corpus/entry-file"])
    func entryFileInputsBreakNoProperty(_ folder: String) throws {
        let inputs = try Self.inputs(in: folder)
        for (name, bytes) in inputs {
            let violations = bytes.withUnsafeBytes { DecoderProperties.entryFileInputViolations($0) }
            #expect(violations.isEmpty, "\(folder)/\(name): \(violations)")
        }
    }

    @Test(arguments: ["regressions/manifest", "corpus/manifest"])
    func manifestInputsBreakNoProperty(_ folder: String) throws {
        let inputs = try Self.inputs(in: folder)
        for (name, bytes) in inputs {
            let violations = bytes.withUnsafeBytes { DecoderProperties.manifestInputViolations($0) }
            #expect(violations.isEmpty, "\(folder)/\(name): \(violations)")
        }
    }

    /// The seeds must be what they claim: valid files the decoders accept
    /// (else the fuzzers would start from nothing).
    @Test func seedsAreValidFiles() throws {
        for (name, bytes) in try Self.inputs(in: "corpus/entry-file") {
            #expect(bytes.withUnsafeBytes { try? EntryFile.decode($0) } != nil, "corpus/entry-file/\(name) does not decode")
        }
        for (name, bytes) in try Self.inputs(in: "corpus/manifest") {
            #expect(bytes.withUnsafeBytes { try? Manifest(decoding: $0) } != nil, "corpus/manifest/\(name) does not decode")
        }
    }

    /// The bound the properties put on compressed headers (255 × stored) holds
    /// for the values LZ4 shrinks most, so it can't reject a file the writer made.
    @Test(arguments: [1 << 10, 1 << 16, 4 << 20])
    func theLZ4BoundHoldsForTheMostCompressibleValues(length: Int) {
        for payload in [Data(count: length), Data(repeating: 0x61, count: length)] {
            var draft = EntryFile.draft(
                name: EntryName(space: "", key: "zeros"), kind: 0, payload: payload, expiry: 0, compressionThreshold: 0
            )
            draft.seal(sequence: 1)
            #expect(draft.isCompressed)
            #expect(length <= DecoderProperties.largestLZ4Ratio * draft.storedLength, "LZ4 made \(length) bytes into \(draft.storedLength)")
            #expect(draft.bytes.withUnsafeBytes { DecoderProperties.entryFileInputViolations($0) }.isEmpty)
        }
    }

    /// Every file of `Fuzz/<folder>` (dot files aside), by name.
    static func inputs(in folder: String) throws -> [(name: String, bytes: Data)] {
        let url = fuzzFolder.appendingPathComponent(folder)
        let names = try FileManager.default.contentsOfDirectory(atPath: url.path).filter { !$0.hasPrefix(".") }.sorted()
        return try names.map { ($0, try Data(contentsOf: url.appendingPathComponent($0))) }
    }
}
