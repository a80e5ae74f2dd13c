import Foundation
import KacheCrashHarness
import KacheTestSupport
import Testing
@testable import Kache

/// Issue 6, part 4: writes to a file system that is full. A `set` throws
/// `KacheError.diskFull`, leaves no partial file, memory keeps serving, and
/// every entry stored before survives a reopen.
///
/// The full file system is a 2 MiB tmpfs where the machine lets the test
/// mount one (as root); elsewhere the same scenario runs in the harness under
/// a file-size limit (`RLIMIT_FSIZE`), which always runs as well.
@Suite struct FullDiskTests {
    static let fileSizeLimit = 64 << 10

    @Test func setsOnAFullFileSystemThrowAndKeepEverything() throws {
        let (mount, refusal) = TmpfsMount.mount(bytes: 2 << 20)
        guard let mount else {
            print("No tmpfs (\(refusal ?? "")); running the scenario under RLIMIT_FSIZE instead")
            try fillUnderAFileSizeLimit()
            return
        }
        let directory = mount.url.appendingPathComponent("cache")
        let configuration = Kache.Configuration(durability: .sync, compressionThreshold: .max, logger: quietLogger)
        let cache = try Kache(directory: directory, configuration: configuration)
        var stored: [String: Data] = [:]
        for index in 0 ..< 8 {
            stored["early-\(index)"] = CrashValues.fillValue(size: 1000 + index)
            try cache.set(stored["early-\(index)"]!, forKey: "early-\(index)", ttl: .seconds(3600))
        }
        // Fill the file system with 64 KiB values until one is refused.
        var refusedKey: String?
        for index in 0 ..< 100 {
            let value = CrashValues.fillValue(size: 64 << 10)
            do {
                try cache.set(value, forKey: "fill-\(index)", ttl: .seconds(3600))
                stored["fill-\(index)"] = value
            } catch {
                #expect(Self.isDiskFull(error), "a full disk gave \(error)")
                refusedKey = "fill-\(index)"
                break
            }
        }
        let refused = try #require(refusedKey, "a 2 MiB file system took 100 values of 64 KiB")
        // A refused overwrite keeps the old value.
        let listing = DirectoryListing(root: directory)
        #expect(throws: KacheError.diskFull(path: listing.entryPath(key: "early-0"))) {
            try cache.set(CrashValues.fillValue(size: 1 << 20), forKey: "early-0", ttl: .seconds(3600))
        }

        #expect(listing.temporaryFiles.isEmpty, "partial files left behind: \(listing.temporaryFiles)")
        #expect(!FileManager.default.fileExists(atPath: listing.entryPath(key: refused)))
        #expect(!cache.contains(refused))
        for (key, value) in stored { #expect(cache.data(forKey: key) == value, "\(key) is not served after the disk filled") }
        #expect(cache.statistics.writeErrors == 2)
        cache.checkInvariants()
        do { try cache.close() } catch { #expect(Self.isDiskFull(error), "closing on a full disk gave \(error)") }

        let reopened = try Kache(directory: directory, configuration: configuration)
        for (key, value) in stored { #expect(reopened.data(forKey: key) == value, "\(key) did not survive the full disk") }
        #expect(reopened.data(forKey: refused) == nil)
        #expect(reopened.statistics.quarantined == 0)
        #expect(listing.temporaryFiles.isEmpty)
        try? reopened.close()
    }

    /// `save()` on a file system that fills while the `async` writer works.
    /// It promises that everything set before it is durable, so either it
    /// returns and every value set before it reads back, exact, after a
    /// reopen; or it throws `diskFull`, and what the previous save made
    /// durable stays. Either way no value is ever served wrong.
    @Test func aSaveOnAFullFileSystemKeepsItsPromiseOrThrowsDiskFull() throws {
        let (mount, refusal) = TmpfsMount.mount(bytes: 1 << 20)
        let folder = ScratchFolder()
        // Without a tmpfs, the async writer runs on the ordinary disk: nothing fills, and the save must keep everything.
        if mount == nil { print("No tmpfs (\(refusal ?? "")); the async scenario runs on the ordinary disk") }
        let directory = (mount?.url ?? folder.url).appendingPathComponent("cache")
        let configuration = Kache.Configuration(durability: .async, compressionThreshold: .max, logger: quietLogger)
        let cache = try Kache(directory: directory, configuration: configuration)
        var saved: [String: Data] = [:]
        for index in 0 ..< 4 {
            saved["saved-\(index)"] = CrashValues.fillValue(size: 2000 + index)
            try cache.set(saved["saved-\(index)"]!, forKey: "saved-\(index)", ttl: .seconds(3600))
        }
        try cache.save()
        var later: [String: Data] = [:]
        for index in 0 ..< 40 {
            later["later-\(index)"] = CrashValues.fillValue(size: 64 << 10)
            try cache.set(later["later-\(index)"]!, forKey: "later-\(index)", ttl: .seconds(3600))
        }
        let saveError: KacheError?
        do {
            try cache.save()
            saveError = nil
        } catch {
            saveError = error as? KacheError
            #expect(saveError?.case == .diskFull, "saving on a full disk gave \(error)")
        }
        if mount != nil { #expect(cache.statistics.writeErrors > 0, "1 MiB took 40 values of 64 KiB") }
        for (key, value) in saved { #expect(cache.data(forKey: key) == value) }
        for (key, value) in later {
            let found = cache.data(forKey: key)
            #expect(found == value || (found == nil && saveError != nil), "\(key) \(found == nil ? "is lost, yet save() returned" : "served wrong bytes")")
        }
        cache.checkInvariants()
        try? cache.close()

        let reopened = try Kache(directory: directory, configuration: configuration)
        for (key, value) in saved { #expect(reopened.data(forKey: key) == value, "\(key) was saved before the disk filled") }
        for (key, value) in later {
            let found = reopened.data(forKey: key)
            #expect(found == value || (found == nil && saveError != nil), "\(key) \(found == nil ? "is lost, yet save() returned" : "reads wrong bytes")")
        }
        #expect(DirectoryListing(root: directory).temporaryFiles.isEmpty)
        try? reopened.close()
    }

    @Test func setsOverAFileSizeLimitThrowAndKeepEverything() throws {
        try fillUnderAFileSizeLimit()
    }

    /// Runs `KacheCrashHarness fill` (see `FillCommand`) under RLIMIT_FSIZE
    /// and checks what it printed and what it left.
    private func fillUnderAFileSizeLimit() throws {
        let scratch = ScratchFolder()
        let directory = scratch.child("cache")
        let harness = try ChildProcess.harness(["fill", directory.path, "\(Self.fileSizeLimit)"], outputPath: scratch.child("fill.out").path)
        #expect(try harness.wait(timeout: .seconds(60)) == 0, "\(harness.output())")
        let lines = harness.output().split(separator: "\n").map { $0.split(separator: " ").map(String.init) }
        let stored = lines.filter { $0.first == "stored" }.map { ($0[1], Int($0[2])!) }
        let refused = lines.filter { $0.first == "refused" }
        #expect(stored.count >= 12, "\(harness.output())")
        #expect(refused.count == 2, "\(harness.output())")
        #expect(refused.allSatisfy { $0.last == "diskFull" }, "a write over the limit gave another error: \(harness.output())")
        #expect(lines.filter { $0.first == "read" }.allSatisfy { $0.last == "intact" }, "\(harness.output())")
        #expect(lines.contains(["closed"]), "\(harness.output())")

        let listing = DirectoryListing(root: directory)
        #expect(listing.temporaryFiles.isEmpty)
        let sizes = try listing.entryFiles().map { try FileManager.default.attributesOfItem(atPath: $0)[.size] as! Int }
        #expect(sizes.allSatisfy { $0 <= Self.fileSizeLimit }, "a partial file is left: \(sizes.max() ?? 0) bytes")
        // Each key holds its last stored value (small-0 its first: the overwrite was refused).
        var expected: [String: Int] = [:]
        for (key, size) in stored where expected[key] == nil { expected[key] = size }
        let cache = try Kache(directory: directory, configuration: .init(durability: .sync, logger: quietLogger))
        for (key, size) in expected { #expect(cache.data(forKey: key) == CrashValues.fillValue(size: size), "\(key) did not survive") }
        for line in refused where expected[line[1]] == nil { #expect(cache.data(forKey: line[1]) == nil) }
        #expect(cache.statistics.quarantined == 0)
        try cache.close()
    }

    static func isDiskFull(_ error: any Error) -> Bool {
        if case .diskFull = error as? KacheError { return true }
        return false
    }
}
