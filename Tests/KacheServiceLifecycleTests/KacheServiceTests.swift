import Foundation
import Kache
import KacheServiceLifecycle
import KacheStorage
import KacheTestSupport
import Logging
import ServiceLifecycle
import Testing

/// `KacheService` in a `ServiceGroup` of this process: the shutdown saves
/// and closes the cache, and a failed save is the error the group reports.
@Suite struct KacheServiceTests {
    /// `async`, so that a set returns before its record is written, and
    /// only a save (or close) makes it durable.
    private static let configuration = {
        var configuration = Kache.Configuration()
        configuration.durability = .async
        return configuration
    }()

    private static let logger = Logger(label: "KacheServiceTests", factory: { _ in SwiftLogNoOpLogHandler() })

    private static func value(_ index: Int) -> Data {
        Data(String(repeating: "value-\(index).", count: 1 + index % 8).utf8)
    }

    /// Runs `group` in a child task while `body` runs, then waits for the group's end.
    private static func whileRunning(
        _ group: ServiceGroup, _ body: () async throws -> Void
    ) async throws {
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await body()
            try await tasks.waitForAll()
        }
    }

    @Test(.timeLimit(.minutes(1))) func gracefulShutdownSavesEverySetAcknowledgedBeforeIt() async throws {
        let directory = TemporaryDirectory()
        let cache = try Kache(directory: directory.url, configuration: Self.configuration)
        let group = ServiceGroup(services: [KacheService(cache: cache)], logger: Self.logger)
        try await Self.whileRunning(group) {
            for index in 0 ..< 500 {
                try await cache.set(Self.value(index), forKey: "key-\(index)", ttl: .seconds(3600))
            }
            await group.triggerGracefulShutdown()
        }

        // Closed: later sets are refused, and the directory's lock is free for a new instance.
        #expect(throws: KacheError.closed) { try cache.set(Data("late".utf8), forKey: "late", ttl: .seconds(60)) }
        let reopened = try Kache(directory: directory.url, configuration: Self.configuration)
        defer { try? reopened.close() }
        #expect(reopened.statistics.entries == 500)
        for index in 0 ..< 500 {
            #expect(await reopened.data(forKey: "key-\(index)") == Self.value(index), "key-\(index)")
        }
    }

    @Test(.timeLimit(.minutes(1))) func cancellingTheGroupAlsoSavesAndClosesTheCache() async throws {
        let directory = TemporaryDirectory()
        let cache = try Kache(directory: directory.url, configuration: Self.configuration)
        let group = ServiceGroup(services: [KacheService(cache: cache)], logger: Self.logger)
        let running = Task { try await group.run() }
        for index in 0 ..< 200 {
            try await cache.set(Self.value(index), forKey: "key-\(index)", ttl: .seconds(3600))
        }
        running.cancel()
        // The service returns once the cache is saved and closed; the group
        // then ends, with or without a CancellationError of its own.
        _ = await running.result

        #expect(throws: KacheError.closed) { try cache.set(Data("late".utf8), forKey: "late", ttl: .seconds(60)) }
        let reopened = try Kache(directory: directory.url, configuration: Self.configuration)
        defer { try? reopened.close() }
        for index in 0 ..< 200 {
            #expect(await reopened.data(forKey: "key-\(index)") == Self.value(index), "key-\(index)")
        }
    }

    /// A write the `async` writer lost (ENOSPC) makes the shutdown's save
    /// throw; the group reports that error, and the cache is closed all the same.
    @Test(.timeLimit(.minutes(1))) func aFailedSaveIsTheGroupsErrorAndTheCacheIsClosedAllTheSame() async throws {
        let directory = TemporaryDirectory()
        defer { DiskFaults.removeAll(pathContaining: directory.path) }
        var configuration = Self.configuration
        configuration.segmentThreshold = 0   // every entry in a file of its own under objects/
        let cache = try Kache(directory: directory.url, configuration: configuration)
        try await cache.set(Data("kept".utf8), forKey: "kept", ttl: .seconds(3600))
        try await cache.save()
        DiskFaults.inject(ENOSPC, on: .write, pathContaining: directory.path + "/objects/", times: 1)
        try await cache.set(Data("lost".utf8), forKey: "lost", ttl: .seconds(3600))

        let group = ServiceGroup(services: [KacheService(cache: cache)], logger: Self.logger)
        let error = await #expect(throws: KacheError.self) {
            try await Self.whileRunning(group) { await group.triggerGracefulShutdown() }
        }
        #expect(error?.case == .diskFull, "\(String(describing: error))")

        #expect(throws: KacheError.closed) { try cache.set(Data("late".utf8), forKey: "late", ttl: .seconds(60)) }
        let reopened = try Kache(directory: directory.url, configuration: configuration)
        defer { try? reopened.close() }
        #expect(await reopened.data(forKey: "kept") == Data("kept".utf8))
        #expect(await reopened.data(forKey: "lost") == nil)
    }

    /// Two services for one cache: the second to shut down finds it closed, and says so.
    @Test(.timeLimit(.minutes(1))) func aSecondServiceForTheSameCacheThrowsClosed() async throws {
        let directory = TemporaryDirectory()
        let cache = try Kache(directory: directory.url, configuration: Self.configuration)
        try await cache.set(Self.value(1), forKey: "key-1", ttl: .seconds(3600))
        let group = ServiceGroup(services: [KacheService(cache: cache), KacheService(cache: cache)], logger: Self.logger)
        await #expect(throws: KacheError.closed) {
            try await Self.whileRunning(group) { await group.triggerGracefulShutdown() }
        }
        let reopened = try Kache(directory: directory.url, configuration: Self.configuration)
        defer { try? reopened.close() }
        #expect(await reopened.data(forKey: "key-1") == Self.value(1))
    }
}
