import Foundation
import Testing
@testable import KacheBench

@Suite("Folder sizes and removal")
struct FileTreeTests {
    @Test func usageCountsFilesLengthsAndAllocatedBlocks() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("kache-bench-tree-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root.appendingPathComponent("a/b"), withIntermediateDirectories: true)
        try Data(count: 10).write(to: root.appendingPathComponent("one"))
        try Data(count: 5000).write(to: root.appendingPathComponent("a/b/two"))
        let usage = FileTree.usage(of: root.path)
        #expect(usage.files == 2 && usage.fileBytes == 5010)
        #expect(usage.allocatedBytes >= 5010)
        #expect(FileTree.usage(of: root.appendingPathComponent("absent").path) == FileTree.Usage())

        try FileTree.remove(root.path)
        #expect(!FileManager.default.fileExists(atPath: root.path))
        try FileTree.remove(root.path)
    }
}
