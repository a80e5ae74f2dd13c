import Foundation
import KacheStorage
import KacheTestSupport
import Synchronization
import Testing
@testable import Kache

/// A FIFO planted among the entry files is not an entry, and opening it
/// read-only would wait for a writer that never comes. The rebuild at open
/// and the read-only tools must treat it as a file that is not an entry, and
/// return.
@Suite struct PlantedFIFOTests {
    /// A directory of three entries in files of their own, with no manifest
    /// (so opening rebuilds from the files), and a FIFO in a shard folder.
    private func directoryWithAFIFO(in scratch: ScratchFolder) throws -> (directory: URL, fifo: String) {
        let directory = scratch.child("cache")
        let cache = try Kache(directory: directory, configuration: .reliability(.sync))
        for index in 0 ..< 3 { try cache.set(Data(repeating: UInt8(index), count: 100), forKey: "k\(index)", ttl: .seconds(3600)) }
        try cache.close()
        try FileManager.default.removeItem(at: directory.appendingPathComponent(DiskStore.manifestFile))
        let shard = directory.appendingPathComponent("\(DiskStore.objectsFolder)/00")
        try FileManager.default.createDirectory(at: shard, withIntermediateDirectories: true)  // made when first written to
        let fifo = shard.appendingPathComponent("planted").path
        #expect(mkfifo(fifo, 0o600) == 0, "mkfifo: \(String(cString: strerror(errno)))")
        return (directory, fifo)
    }

    /// Runs `body` on a thread of its own and waits up to 20 seconds for it.
    /// If it is still waiting then, a writer opens and closes the FIFO so
    /// that a blocked open returns, and the wait is recorded as the failure.
    private func returnsWithoutAWriter(_ what: String, fifo: String, _ body: @escaping @Sendable () -> Void) {
        let finished = Atomic<Bool>(false)
        let thread = Thread {
            body()
            finished.store(true, ordering: .releasing)
        }
        thread.start()
        do {
            try blockUntil("\(what) returns", timeout: .seconds(20)) { finished.load(ordering: .acquiring) }
        } catch {
            Issue.record("\(what) waited on the FIFO for a writer")
            while !finished.load(ordering: .acquiring) {
                let writer = open(fifo, O_WRONLY | O_NONBLOCK)
                if writer >= 0 { close(writer) }
                usleep(10_000)
            }
        }
    }

    @Test func theRebuildAtOpenQuarantinesAPlantedFIFO() throws {
        let scratch = ScratchFolder()
        let (directory, fifo) = try directoryWithAFIFO(in: scratch)
        let opened = Mutex<Result<Kache, any Error>?>(nil)
        returnsWithoutAWriter("opening the cache", fifo: fifo) {
            let result = Result { try Kache(directory: directory, configuration: .reliability(.sync)) }
            opened.withLock { $0 = result }
        }
        let cache = try #require(try opened.withLock { $0 }?.get())
        defer { try? cache.close() }
        for index in 0 ..< 3 { #expect(cache.data(forKey: "k\(index)") == Data(repeating: UInt8(index), count: 100)) }
        #expect(cache.statistics.quarantined == 1)
        #expect(!FileManager.default.fileExists(atPath: fifo), "the FIFO stayed among the entry files")
    }

    @Test func inspectAndVerifyReportAPlantedFIFOAsNotAnEntry() throws {
        let scratch = ScratchFolder()
        let (directory, fifo) = try directoryWithAFIFO(in: scratch)
        let found = Mutex<(inspection: CacheDirectory.Inspection?, verification: CacheDirectory.Verification?)>((nil, nil))
        returnsWithoutAWriter("kache inspect and verify", fifo: fifo) {
            let inspection = try? CacheDirectory(url: directory).inspect()
            let verification = try? CacheDirectory(url: directory).verify()
            found.withLock { $0 = (inspection, verification) }
        }
        let (inspection, verification) = found.withLock { $0 }
        #expect(inspection != nil)
        let problems = try #require(verification).problems
        #expect(problems.contains { $0.file.hasSuffix("00/planted") && $0.kind == .damagedFile }, "\(problems)")
        #expect(FileManager.default.fileExists(atPath: fifo), "a read-only tool moved the FIFO")
    }
}
