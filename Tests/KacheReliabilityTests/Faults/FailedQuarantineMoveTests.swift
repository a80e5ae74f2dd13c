import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

/// Issue 36: a damaged file whose move into `quarantine/` fails. The damaged
/// entry reads as a miss (never its bytes), it is counted, and every other
/// entry stays readable, also after a reopen.
@Suite struct FailedQuarantineMoveTests {
    @Test func aDamagedFileThatCannotBeMovedAsideHidesNothingElse() throws {
        let fixture = try FaultFixture()
        let path = fixture.listing.entryPath(key: "key-3")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[bytes.count / 2] ^= 0x40
        try bytes.write(to: URL(fileURLWithPath: path))
        let cache = try fixture.open()
        DiskFaults.inject(EIO, on: .rename, pathContaining: path)
        #expect(cache.data(forKey: "key-3") == nil)
        #expect(cache.statistics.quarantined == 1)
        #expect(cache.data(forKey: "key-3") == nil, "read again")
        for (key, value) in fixture.values where key != "key-3" { #expect(cache.data(forKey: key) == value) }
        cache.checkInvariants()
        try cache.close()
        fixture.removeFaults()

        let reopened = try fixture.open()
        #expect(reopened.data(forKey: "key-3") == nil)
        for (key, value) in fixture.values where key != "key-3" { #expect(reopened.data(forKey: key) == value, "\(key) after a reopen") }
        try reopened.close()
    }
}
