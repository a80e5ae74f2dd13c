import Foundation
import KacheCrashHarness
import KacheTestSupport
import Testing
@testable import Kache

/// Issue 15, item 1, for real: a process whose descriptors run out (EMFILE)
/// reads entries whose values are only in their files. Every read misses
/// while no descriptor is free, nothing is quarantined, and every value reads
/// back once descriptors are free again.
@Suite struct DescriptorExhaustionTests {
    @Test func readsWhileDescriptorsAreExhaustedMissAndLoseNothing() throws {
        let fixture = try FaultFixture(count: 20)
        let child = try ChildProcess.harness(
            ["exhaust", fixture.directory.path, "key-", "\(fixture.values.count)"],
            outputPath: fixture.scratch.child("exhaust.out").path
        )
        #expect(try child.wait(timeout: .seconds(60)) == 0, "\(child.output())")
        let report = ExhaustReport(parsing: child.output())
        #expect(report.exhaustedBy == "EMFILE", "\(child.output())")
        #expect(report.hitsWhileExhausted == 0, "\(child.output())")
        #expect(report.hitsAfterwards == fixture.values.count, "\(child.output())")
        #expect(report.quarantined == 0, "\(child.output())")
        #expect(fixture.listing.quarantinedFiles.isEmpty)
        #expect(fixture.listing.entryFiles().count == fixture.values.count)
        // The harness counted hits; check the values byte for byte here.
        let cache = try fixture.open()
        for (key, value) in fixture.values { #expect(cache.data(forKey: key) == value) }
        try cache.close()
    }
}

/// The line `ExhaustCommand` prints, as numbers.
struct ExhaustReport {
    var exhaustedBy = ""
    var hitsWhileExhausted = -1
    var hitsAfterwards = -1
    var quarantined = -1

    init(parsing output: String) {
        let words = output.split(whereSeparator: \.isWhitespace).map(String.init)
        for (name, value) in zip(words, words.dropFirst()) {
            switch name {
            case "exhausted-by": exhaustedBy = value
            case "hits-while": hitsWhileExhausted = Int(value) ?? -1
            case "hits-after": hitsAfterwards = Int(value) ?? -1
            case "quarantined": quarantined = Int(value) ?? -1
            default: break
            }
        }
    }
}
