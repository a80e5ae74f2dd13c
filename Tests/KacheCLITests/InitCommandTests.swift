import Foundation
import Kache
import Testing

/// `kache init DIR [--disk-budget SIZE]` creates a cache directory; every
/// other command still refuses what is not one.
@Suite struct InitCommandTests {
    @Test func initCreatesACacheThatTheOtherCommandsThenUse() throws {
        let fixture = CacheDirectoryFixture()
        let refused = try KacheProcess.run(["set", fixture.path, "k", "--ttl", "1h"], input: Data("v".utf8))
        #expect(refused.status == 4, "set on a new path: \(refused.output)")
        #expect(!FileManager.default.fileExists(atPath: fixture.path))

        let created = try KacheProcess.run(["init", fixture.path, "--disk-budget", "500M"])
        #expect(created.status == 0, "\(created.output)")
        #expect(created.output == "Created the cache directory \(fixture.path) with a disk budget of 500.0 MiB.\n")
        #expect(FileManager.default.fileExists(atPath: fixture.url.appendingPathComponent("manifest").path))
        #expect(try CacheDirectory(url: fixture.url).savedDiskBudget() == 500 << 20)

        let set = try KacheProcess.run(["set", fixture.path, "k", "--ttl", "1h"], input: Data("value".utf8))
        #expect(set.status == 0, "\(set.output)")
        #expect(try KacheProcess.run(["get", fixture.path, "k"]).stdout == Data("value".utf8))
        // A writer opened by the tool keeps the budget init saved.
        #expect(try CacheDirectory(url: fixture.url).savedDiskBudget() == 500 << 20)
        let json = try KacheProcess.run(["inspect", fixture.path, "--json"]).decoded(InspectJSON.self)
        #expect(json.summary.diskBudget == 500 << 20)
    }

    @Test func initOnAnExistingCacheChangesOnlyTheBudgetItIsGiven() throws {
        let fixture = CacheDirectoryFixture()
        #expect(try KacheProcess.run(["init", fixture.path]).status == 0)
        #expect(try CacheDirectory(url: fixture.url).savedDiskBudget() == nil)
        #expect(try KacheProcess.run(["set", fixture.path, "k", "--ttl", "1h"], input: Data("v".utf8)).status == 0)

        let again = try KacheProcess.run(["init", fixture.path])
        #expect(again.status == 0)
        #expect(again.output.contains("already a Kache cache directory; nothing changed"))
        let budget = try KacheProcess.run(["init", fixture.path, "--disk-budget", "2G"])
        #expect(budget.status == 0, "\(budget.output)")
        #expect(try CacheDirectory(url: fixture.url).savedDiskBudget() == 2 << 30)
        #expect(try KacheProcess.run(["get", fixture.path, "k"]).stdout == Data("v".utf8))
    }

    @Test func initRefusesAFolderThatHoldsSomethingElse() throws {
        let fixture = CacheDirectoryFixture()
        try FileManager.default.createDirectory(at: fixture.url, withIntermediateDirectories: true)
        try Data("notes".utf8).write(to: fixture.url.appendingPathComponent("notes.txt"))
        let before = fixture.snapshot()
        let outcome = try KacheProcess.run(["init", fixture.path])
        expectFailure(outcome, status: 4, message: "exists and is not an empty folder or a Kache cache directory")
        #expect(fixture.snapshot() == before)
    }

    @Test(arguments: ["0", "-5M", "12Q", "M", "1.5G", "99999999999T"])
    func badSizesAreUsageErrors(size: String) throws {
        let fixture = CacheDirectoryFixture()
        let outcome = try KacheProcess.run(["init", fixture.path, "--disk-budget", size])
        #expect(outcome.status == 2, "--disk-budget \(size): \(outcome.output)")
        #expect(!FileManager.default.fileExists(atPath: fixture.path))
    }

    @Test(arguments: [("64K", 64 << 10), ("500m", 500 << 20), ("2GiB", 2 << 30), ("3MB", 3 << 20), ("1048576", 1 << 20)])
    func sizesAreAcceptedInEveryForm(size: String, bytes: Int) throws {
        let fixture = CacheDirectoryFixture()
        let outcome = try KacheProcess.run(["init", fixture.path, "--disk-budget", size])
        if bytes < 2 << 20 {
            // Smaller than the directory's own folders: refused by the library, as a usage error,
            // and what the attempt created is gone.
            #expect(outcome.status == 2, "\(outcome.output)")
            #expect(!FileManager.default.fileExists(atPath: fixture.path))
        } else {
            #expect(outcome.status == 0, "\(outcome.output)")
            #expect(try CacheDirectory(url: fixture.url).savedDiskBudget() == bytes)
        }
    }
}
