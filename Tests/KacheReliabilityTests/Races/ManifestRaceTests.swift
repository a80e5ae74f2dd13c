import Foundation
import KacheStorage
import KacheTestSupport
import Testing
@testable import Kache

/// `save()` racing the writers that share the instance: the manifest it
/// leaves must never claim more than the files hold, nor less than a save
/// that returned promised.
///
/// The first test races real threads. The two others stop a writer inside
/// its window, after it changed the index and before it changed the file:
/// the test holds the lock that orders file changes to that key
/// (`DiskStore.withExclusiveAccess`), so the writer's `set` or `removeValue`
/// waits there. Meanwhile the test saves, and the process "dies"
/// (`abandonForTesting`: no flush, no manifest, the lock released), and the
/// directory is reopened while the writer is still stuck, as if SIGKILL had
/// stopped it there.
@Suite struct ManifestRaceTests {
    @Test func concurrentSavesAllSucceedAndKeepEverything() throws {
        let scratch = ScratchFolder()
        let directory = scratch.child("cache")
        let cache = try Kache(directory: directory, configuration: .reliability(.sync))
        // Threads, not tasks: the cooperative pool would run only as many at once as there are cores.
        let savers = (0 ..< 4).map { _ in BackgroundCall() }
        let failures = Locked<[String]>([])
        for (thread, saver) in savers.enumerated() {
            saver.start {
                for step in 0 ..< 100 {
                    do {
                        try cache.set(namedValue("t\(thread)", version: step), forKey: "t\(thread)", ttl: .seconds(3600))
                        try cache.save()
                    } catch {
                        failures.withLock { $0.append("thread \(thread), step \(step): \(error)") }
                    }
                }
            }
        }
        for saver in savers { try saver.wait() }
        let failed = failures.withLock { $0 }
        #expect(failed.isEmpty, "\(failed.count) of 400 saves failed: \(failed.prefix(3))")
        cache.abandonForTesting()
        let reopened = try Kache(directory: directory, configuration: .reliability(.sync))
        for thread in 0 ..< 4 {
            #expect(reopened.data(forKey: "t\(thread)") == namedValue("t\(thread)", version: 99))
        }
        #expect(reopened.statistics.quarantined == 0)
        try reopened.close()
    }

    @Test func aSaveDuringAnUnfinishedSetKeepsTheAcknowledgedValue() throws {
        let scratch = ScratchFolder()
        let directory = scratch.child("cache")
        let cache = try Kache(directory: directory, configuration: .reliability(.sync))
        let acknowledged = namedValue("k", version: 1)
        let newer = namedValue("k", version: 2)
        try cache.set(acknowledged, forKey: "k", ttl: .seconds(3600))
        try cache.save()

        let writer = BackgroundCall()
        try cache.disk!.withExclusiveAccess(to: EntryName(space: "", key: "k")) { () throws in
            writer.start { try cache.set(newer, forKey: "k", ttl: .seconds(3600)) }
            // The writer has changed the index (and marked the manifest stale); its file write waits for us.
            try blockUntil("the writer changes the index and marks the manifest stale", timeout: .seconds(10)) {
                cache.data(forKey: "k") == newer && FileManager.default.fileExists(atPath: directory.appendingPathComponent(DiskStore.dirtyFile).path)
            }
            try cache.save()
            cache.abandonForTesting()

            let reopened = try Kache(directory: directory, configuration: .reliability(.sync))
            let found = reopened.data(forKey: "k")
            #expect(found == acknowledged || found == newer, "the acknowledged and saved value of k was lost")
            try reopened.close()
        }
        try writer.wait()
    }

    @Test func aSaveDuringAnUnfinishedRemovalNeverBringsTheValueBack() throws {
        let scratch = ScratchFolder()
        let directory = scratch.child("cache")
        let cache = try Kache(directory: directory, configuration: .reliability(.sync))
        try cache.set(namedValue("k", version: 1), forKey: "k", ttl: .seconds(3600))
        try cache.save()

        let remover = BackgroundCall()
        try cache.disk!.withExclusiveAccess(to: EntryName(space: "", key: "k")) { () throws in
            remover.start { cache.removeValue(forKey: "k") }
            // The remover has changed the index (and marked the manifest stale); its deletion waits for us.
            try blockUntil("the remover changes the index and marks the manifest stale", timeout: .seconds(10)) {
                !cache.contains("k") && FileManager.default.fileExists(atPath: directory.appendingPathComponent(DiskStore.dirtyFile).path)
            }
            try cache.save()
            cache.abandonForTesting()

            // After the crash k may hold its value or nothing (the removal was under way)…
            let second = try Kache(directory: directory, configuration: .reliability(.sync))
            let seen = second.data(forKey: "k")
            try second.set(namedValue("other", version: 1), forKey: "other", ttl: .seconds(3600))
            second.abandonForTesting()
            // …but what one run saw, the next must see too, after that run dies in turn.
            let third = try Kache(directory: directory, configuration: .reliability(.sync))
            #expect(third.data(forKey: "k") == seen, "k read \(seen == nil ? "nothing" : "its value"), then the opposite after another crash")
            #expect(DirectoryListing(root: directory).entryFiles().count == third.statistics.filesOnDisk, "orphaned entry files")
            try third.close()
        }
        try remover.wait()
    }
}
