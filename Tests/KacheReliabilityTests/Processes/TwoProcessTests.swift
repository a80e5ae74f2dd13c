import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

/// Issue 6, part 6: one writing process per directory, and a writer killed
/// with SIGKILL leaves nothing that stops the next one.
@Suite struct TwoProcessTests {
    @Test func aSecondWriterIsRefusedWithTheHoldersPID() throws {
        let scratch = ScratchFolder()
        let directory = scratch.child("cache")
        let holder = try ChildProcess.harness(["hold", directory.path], outputPath: scratch.child("hold.out").path)
        let held = try #require(holder.waitForLine(startingWith: "held", timeout: .seconds(20)), "the holder did not open: \(holder.output())")
        #expect(held == "held \(holder.pid)")

        #expect(throws: KacheError.directoryLocked(path: directory.standardizedFileURL.path, holderPID: holder.pid)) {
            try Kache(directory: directory, configuration: .init(durability: .sync))
        }
        #expect(try CacheDirectory(url: directory).readLockHolder() == CacheDirectory.LockHolder(pid: holder.pid))
        // The holder is untouched by the refused attempt: still running, its entry still there.
        #expect(kill(holder.pid, 0) == 0)
        try holder.kill()
    }

    @Test func aKilledWritersLockIsTakenOverAndItsDataKept() throws {
        let scratch = ScratchFolder()
        let directory = scratch.child("cache")
        let first = try ChildProcess.harness(["hold", directory.path], outputPath: scratch.child("first.out").path)
        _ = try #require(first.waitForLine(startingWith: "held", timeout: .seconds(20)), "the holder did not open: \(first.output())")
        try first.kill()
        #expect(first.exitStatus == 128 + SIGKILL)

        // The kernel released the flock with the process: the next opener takes
        // the directory at once, writes its own pid, and finds the dead writer's entry.
        #expect(try CacheDirectory(url: directory).readLockHolder() == nil)
        let cache = try Kache(directory: directory, configuration: .init(durability: .sync))
        #expect(cache.data(forKey: "holder") == Data("\(first.pid)".utf8))
        let lockFile = try String(contentsOf: directory.appendingPathComponent(DiskStore.lockFile), encoding: .utf8)
        #expect(lockFile.trimmingCharacters(in: .whitespacesAndNewlines) == "\(getpid())")

        // And now a new process is refused, naming this one.
        let second = try ChildProcess.harness(["hold", directory.path], outputPath: scratch.child("second.out").path)
        #expect(try second.wait(timeout: .seconds(20)) == 75, "\(second.output())")
        #expect(second.output() == "locked \(getpid())\n")
        try cache.close()
    }
}
