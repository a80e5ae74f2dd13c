import Foundation
import KacheWorkloads
import Testing

@Suite struct RenameBaselineTests {
    private func temporaryDirectory() -> String {
        FileManager.default.temporaryDirectory.appendingPathComponent("kache-rename-\(UUID().uuidString)").path
    }

    @Test(arguments: [false, true])
    func writtenFilesReadBackEqual(fsync: Bool) throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let baseline = try RenameBaseline(directory: directory, fsync: fsync)
        var rng = SplitMix64(seed: 42)
        let values = (0..<50).map { WorkloadValues.text(index: $0, byteCount: 1024, using: &rng) } + [Data()]

        let seconds = try baseline.writeFiles(values)
        #expect(seconds > 0)
        for (index, value) in values.enumerated() {
            let key = WorkloadKeys.key(index)
            #expect(try baseline.read(forKey: key) == value)
            #expect(FileManager.default.contents(atPath: baseline.path(forKey: key)) == value)
        }
    }

    @Test func filesAreNamedLikeTheKeyInOneOf256Shards() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let baseline = try RenameBaseline(directory: directory)
        let shards = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(shards.count == 256 && shards.contains("00") && shards.contains("ff"))

        let path = baseline.path(forKey: "key-0000042")
        let components = path.split(separator: "/")
        #expect(components.last == "key-0000042")
        #expect(shards.contains(String(components[components.count - 2])))
    }

    @Test func rewritingReplacesTheFileAndLeavesNoTemporary() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let baseline = try RenameBaseline(directory: directory)
        try baseline.write(Data("first".utf8), forKey: "key-0000001")
        try baseline.write(Data("second".utf8), forKey: "key-0000001")
        #expect(try baseline.read(forKey: "key-0000001") == Data("second".utf8))
        let folder = (baseline.path(forKey: "key-0000001") as NSString).deletingLastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["key-0000001"])
    }

    @Test func readingAMissingKeyThrowsWithThePath() throws {
        let directory = temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let baseline = try RenameBaseline(directory: directory)
        let error = try #require(throws: RenameBaseline.SystemCallError.self) {
            try baseline.read(forKey: "key-0000009")
        }
        #expect(error.code == ENOENT && error.description.contains("key-0000009"))
    }
}
