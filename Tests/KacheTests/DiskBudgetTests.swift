import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

extension TemporaryDirectory {
    /// Bytes allocated to every file under the directory (st_blocks × 512, as `du`
    /// counts them), folders excluded.
    func allocatedBytes(under folder: String = "") -> Int {
        let root = folder.isEmpty ? path : url.appendingPathComponent(folder).path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return 0 }
        var total = 0
        while let relative = walker.nextObject() as? String {
            var info = stat()
            guard lstat("\(root)/\(relative)", &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            total += Int(info.st_blocks) * 512
        }
        return total
    }

    /// Each file under the directory with its size and the bytes allocated
    /// to it, one a line: what a failed comparison with `allocatedBytes` shows.
    func fileSizesAndBlocks(under folder: String) -> String {
        let root = url.appendingPathComponent(folder).path
        guard let walker = FileManager.default.enumerator(atPath: root) else { return "no folder \(root)" }
        var lines: [String] = []
        while let relative = walker.nextObject() as? String {
            var info = stat()
            guard lstat("\(root)/\(relative)", &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            lines.append("\(relative): \(info.st_size) bytes, \(Int(info.st_blocks) * 512) allocated")
        }
        return lines.sorted().joined(separator: "\n")
    }

    /// Bytes allocated to the directory and everything under it, folders
    /// included: what `du -s` reports.
    func duBytes() -> Int {
        var info = stat()
        var total = lstat(path, &info) == 0 ? Int(info.st_blocks) * 512 : 0
        guard let walker = FileManager.default.enumerator(atPath: path) else { return total }
        while let relative = walker.nextObject() as? String {
            if lstat("\(path)/\(relative)", &info) == 0 { total += Int(info.st_blocks) * 512 }
        }
        return total
    }
}

@Suite struct DiskBudgetTests {
    /// Bytes of entry files the budget of most tests leaves room for.
    static let budget = 64 * 1024

    /// What a fresh directory reserves of the budget besides entry files (its
    /// folders, lock, room for the manifest), plus one block for the folders'
    /// entries of the few dozen entries these tests store.
    static let reserved: Int = {
        let probe = TemporaryDirectory("reserved-probe")
        let cache = try! Kache(directory: probe.url, configuration: .testing(.sync, filePerEntry: true))
        defer { try? cache.close() }
        return cache.statistics.reservedBytes + 4096
    }()

    /// A configuration whose disk budget leaves `entryBytes` for entry files.
    func configuration(_ clock: ManualClock, budget entryBytes: Int = budget, durability: Durability = .sync) -> Kache.Configuration {
        var configuration = Kache.Configuration.testing(durability, clock: clock, filePerEntry: true)
        configuration.diskBudget = Self.reserved + entryBytes
        return configuration
    }

    @Test(arguments: [Durability.sync, .async])
    func theWholeDirectoryStaysWithinTheBudgetAsDuCountsIt(durability: Durability) throws {
        let dir = TemporaryDirectory()
        let budget = 3 << 20
        var configuration = Kache.Configuration.testing(durability, filePerEntry: true)
        configuration.diskBudget = budget
        let cache = try Kache(directory: dir.url, configuration: configuration)
        let pool = try cache.pool(named: "thumbnails", capacity: 200)
        let queue = try cache.queue(named: "uploads", capacity: 50)
        var random = SeededGenerator(seed: 15)
        for i in 0 ..< 800 {
            let value = incompressible(Int.random(in: 10 ... 9000, using: &random), seed: UInt64(i))
            let ttl = Duration.seconds(Int.random(in: 100 ... 10_000, using: &random))
            switch i % 4 {
            case 0: try pool.set(value, forKey: "p\(i)", ttl: ttl)
            case 1: try queue.push(value, ttl: ttl)
            default: try cache.set(value, forKey: "a-longer-key-for-the-manifest-\(i)", ttl: ttl)
            }
            if i % 100 == 99 { try cache.save() }
            if durability == .sync || i % 100 == 99, i % 20 == 19 {
                #expect(dir.duBytes() <= budget, "du after set \(i): \(dir.duBytes()) > \(budget)")
            }
        }
        #expect(cache.statistics.budgetEvictions > 100)
        let statistics = cache.statistics
        #expect(statistics.allocatedBytes + statistics.reservedBytes <= budget)
        try cache.close()
        #expect(dir.duBytes() <= budget, "du after close: \(dir.duBytes()) > \(budget)")
    }

    @Test func aBudgetThatCannotHoldTheDirectoryItselfIsRefused() throws {
        let dir = TemporaryDirectory()
        var configuration = Kache.Configuration.testing(.sync, filePerEntry: true)
        configuration.diskBudget = 64 << 10
        let error = #expect(throws: KacheError.self) { try Kache(directory: dir.url, configuration: configuration) }
        #expect(error?.case == .invalidConfiguration)
        #expect(!FileManager.default.fileExists(atPath: dir.url.appendingPathComponent("manifest").path))
    }

    /// Entries in segments name no file in a folder: the budget holds room
    /// for the folders' names of files of their own only (48 bytes each).
    @Test func entriesInSegmentsHoldNoRoomForFolderEntries() throws {
        var reserved: [Bool: Int] = [:]
        for filePerEntry in [false, true] {
            let dir = TemporaryDirectory()
            var configuration = Kache.Configuration.testing(.sync, filePerEntry: filePerEntry)
            configuration.diskBudget = 64 << 20
            let cache = try Kache(directory: dir.url, configuration: configuration)
            for i in 0 ..< 1000 { try cache.set(compressible(100, seed: i), forKey: "k\(i)", ttl: .seconds(60)) }
            reserved[filePerEntry] = cache.statistics.reservedBytes
            cache.checkInvariants()
        }
        // 1,000 names of 48 bytes: 48,000 bytes, 12 blocks of 4 KiB.
        #expect(reserved[true]! - reserved[false]! == 12 * 4096)
    }

    @Test func aValueLargerThanTheBudgetIsRefusedAndNothingIsEvicted() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: configuration(clock))
        for i in 0 ..< 5 { try cache.set(Data(count: 1000), forKey: "k\(i)", ttl: .seconds(60)) }
        let before = cache.statistics
        #expect(throws: KacheError.exceedsDiskBudget(bytes: Self.reserved + 69_632, budget: Self.reserved + Self.budget)) {
            try cache.set(incompressible(66_000), forKey: "huge", ttl: .seconds(60))
        }
        #expect(cache.statistics.entries == 5)
        #expect(cache.statistics.allocatedBytes == before.allocatedBytes)
        #expect(dir.entryFiles().count == 5)
    }

    @Test func evictingForTheBudgetDropsTheMemoryCopyButMemoryEvictionKeepsFiles() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        var config = configuration(clock, budget: 3 * 4096)
        config.memoryBudget = 150
        let cache = try Kache(directory: dir.url, configuration: config)
        for i in 0 ..< 3 { try cache.set(Data(count: 100), forKey: "k\(i)", ttl: .seconds(10 + i)) }
        #expect(cache.statistics.memoryEvictions >= 1)
        #expect(dir.entryFiles().count == 3) // memory eviction deleted no file
        try cache.set(Data(count: 100), forKey: "k3", ttl: .seconds(100))
        #expect(cache.data(forKey: "k0") == nil)
        #expect(cache.statistics.budgetEvictions == 1)
    }

    @Test func aSmallerBudgetTrimsOnOpen() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        do {
            let cache = try Kache(directory: dir.url, configuration: configuration(clock, budget: 20 * 4096))
            for i in 0 ..< 20 { try cache.set(Data(count: 100), forKey: "k\(i)", ttl: .seconds(100 + i)) }
            try cache.close()
        }
        let cache = try Kache(directory: dir.url, configuration: configuration(clock, budget: 8 * 4096))
        #expect(cache.statistics.entries == 8)
        #expect(cache.statistics.budgetEvictions == 12)
        #expect(cache.statistics.budgetEvictedBytes == 12 * 4096)
        #expect(!cache.contains("k11") && cache.contains("k12"))
        #expect(dir.allocatedBytes(under: "objects") <= 8 * 4096)
    }

    @Test func theCountSurvivesSaveReopenAndACrash() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        var allocated = 0
        do {
            let cache = try Kache(directory: dir.url, configuration: configuration(clock))
            for i in 0 ..< 30 { try cache.set(compressible(3000 + i * 100, seed: i), forKey: "k\(i)", ttl: .seconds(100)) }
            try cache.save()
            for i in 30 ..< 40 { try cache.set(compressible(3000, seed: i), forKey: "k\(i)", ttl: .seconds(100)) }
            allocated = cache.statistics.allocatedBytes
            cache.abandonForTesting()
        }
        let cache = try Kache(directory: dir.url, configuration: configuration(clock))
        #expect(cache.statistics.allocatedBytes == allocated)
        #expect(cache.statistics.allocatedBytes == dir.allocatedBytes(under: "objects"))
        try cache.close()
        let again = try Kache(directory: dir.url, configuration: configuration(clock))
        #expect(again.statistics.allocatedBytes == allocated)
    }

    @Test func concurrentSetsNeverLeaveTheDirectoryOverBudget() async throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: configuration(clock))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for task in 0 ..< 6 {
                group.addTask {
                    var random = SeededGenerator(seed: UInt64(task))
                    for i in 0 ..< 60 {
                        let size = Int.random(in: 100 ... 6000, using: &random)
                        try cache.set(incompressible(size, seed: UInt64(task * 1000 + i)), forKey: "t\(task)-\(i % 25)",
                                      ttl: .seconds(Int64.random(in: 10 ... 1000, using: &random)))
                    }
                }
            }
            try await group.waitForAll()
        }
        #expect(dir.allocatedBytes(under: "objects") <= Self.budget)
        #expect(dir.allocatedBytes(under: "objects") == cache.statistics.allocatedBytes)
        cache.checkInvariants()
    }

    @Test func asyncWritesStayWithinTheBudgetOnceSaved() throws {
        let clock = ManualClock()
        let dir = TemporaryDirectory()
        let cache = try Kache(directory: dir.url, configuration: configuration(clock, durability: .async))
        for i in 0 ..< 300 { try cache.set(incompressible(2000, seed: UInt64(i)), forKey: "k\(i)", ttl: .seconds(100 + i)) }
        try cache.save()
        #expect(dir.allocatedBytes(under: "objects") <= Self.budget)
        #expect(dir.allocatedBytes(under: "objects") == cache.statistics.allocatedBytes)
    }
}
