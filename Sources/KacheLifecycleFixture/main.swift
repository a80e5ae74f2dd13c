// KacheLifecycleFixture: a test fixture of KacheServiceLifecycleTests, not a
// tool. It opens a cache directory in `async` durability and runs a
// ServiceGroup that shuts down gracefully on SIGTERM, with two services: the
// cache's KacheService, and a writer that sets key-0, key-1, … until the
// shutdown reaches it (or LIMIT keys are set).
//
//   KacheLifecycleFixture DIRECTORY [LIMIT]      (LIMIT: 100000)
//
// Stdout, one line each, every line written only after what it reports:
//   set KEY VALUE   the set of KEY to VALUE returned (is acknowledged)
//   stopped N       the writer saw the shutdown after N sets
// Exit status: 0 once the group returned (the cache saved and closed); 1 if it
// threw (the error on stderr); 2 for bad arguments or a directory that won't open.
import Foundation
import Kache
import KacheServiceLifecycle
import Logging
import ServiceLifecycle

/// Writes one line at once: stdout is a file the test reads while this runs.
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

func fail(_ message: String, status: Int32) -> Never {
    FileHandle.standardError.write(Data(("KacheLifecycleFixture: " + message + "\n").utf8))
    exit(status)
}

/// Sets keys one after another, acknowledging each on stdout, until the
/// group's graceful shutdown reaches it; then returns, so that the group
/// goes on to the services listed before it (the cache).
struct KeyWriter: Service {
    let cache: Kache
    let limit: Int

    func run() async throws {
        var count = 0
        while count < limit, !Task.isShuttingDownGracefully, !Task.isCancelled {
            let key = "key-\(count)"
            // Values of several lengths, so that the records differ in size.
            let value = String(repeating: "value-\(count).", count: 1 + count % 8)
            try await cache.set(Data(value.utf8), forKey: key, ttl: .seconds(3600))
            say("set \(key) \(value)")
            count += 1
        }
        say("stopped \(count)")
        try? await gracefulShutdown()
    }
}

let arguments = CommandLine.arguments
guard arguments.count == 2 || arguments.count == 3, arguments.count == 2 || Int(arguments[2]) != nil else {
    fail("usage: KacheLifecycleFixture DIRECTORY [LIMIT]", status: 2)
}
let limit = arguments.count == 3 ? Int(arguments[2])! : 100_000

var configuration = Kache.Configuration()
// A set returns before its record is written: only the shutdown's save makes
// the acknowledged sets durable.
configuration.durability = .async
let cache: Kache
do {
    cache = try Kache(directory: URL(fileURLWithPath: arguments[1]), configuration: configuration)
} catch {
    fail("\(error)", status: 2)
}

let group = ServiceGroup(
    // Shut down in reverse order: the writer stops before the cache saves.
    services: [KacheService(cache: cache), KeyWriter(cache: cache, limit: limit)],
    gracefulShutdownSignals: [.sigterm],
    logger: Logger(label: "kache-lifecycle-fixture", factory: { StreamLogHandler.standardError(label: $0) })
)
do {
    try await group.run()
} catch {
    fail("the service group threw: \(error)", status: 1)
}
exit(0)
