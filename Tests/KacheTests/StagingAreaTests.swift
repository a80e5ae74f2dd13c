import Foundation
import KacheStorage
import Testing
@testable import Kache

@Suite struct StagingAreaTests {
    private func file(_ byteCount: Int, seed: UInt8) -> Data {
        Data((0 ..< byteCount).map { UInt8(truncatingIfNeeded: $0) &+ seed })
    }

    @Test func stagedFilesReadBackEqualAcrossBlocks() {
        let staging = StagingArea()
        // 40 KiB each: 25 to a block, so 100 files fill four blocks.
        let files = (0 ..< 100).map { file(40 << 10, seed: UInt8($0)) }
        let staged = files.map(staging.stage)
        #expect(staged == files)
    }

    @Test func smallFilesShareABlockBackToBack() {
        let staging = StagingArea()
        let first = staging.stage(file(300, seed: 1))
        let second = staging.stage(file(200, seed: 2))
        let firstEnd = first.withUnsafeBytes { $0.baseAddress! + $0.count }
        let secondStart = second.withUnsafeBytes { $0.baseAddress! }
        #expect(firstEnd == secondStart, "the second file follows the first in the same block")
    }

    @Test func largeAndEmptyFilesKeepTheirOwnBuffer() {
        let staging = StagingArea()
        let large = file(StagingArea.largestStaged, seed: 3)
        let staged = staging.stage(large)
        #expect(staged == large)
        #expect(staged.withUnsafeBytes { $0.baseAddress } == large.withUnsafeBytes { $0.baseAddress })
        #expect(staging.stage(Data()).isEmpty)
    }

    /// A staged file outlives its block's other files and the staging area itself.
    @Test func aStagedFileOutlivesTheArea() {
        var staged: Data
        do {
            let staging = StagingArea()
            staged = staging.stage(file(1_000, seed: 4))
            for index in 0 ..< 2_000 { _ = staging.stage(file(1_000, seed: UInt8(truncatingIfNeeded: index))) }
        }
        #expect(staged == file(1_000, seed: 4))
    }
}
