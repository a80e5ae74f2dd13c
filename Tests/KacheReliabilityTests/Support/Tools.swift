import KacheTestSupport
import Testing

/// The package's own executables, started as a user would.
extension ChildProcess {
    /// Starts `KacheCrashHarness` (`$KACHE_CRASH_HARNESS` overrides where it is)
    /// with `arguments`, its stdout into `outputPath`, with `environment`
    /// added to the test process's.
    static func harness(_ arguments: [String], outputPath: String, environment: [String: String] = [:]) throws -> ChildProcess {
        let executable = try #require(
            product(named: "KacheCrashHarness", environment: "KACHE_CRASH_HARNESS"),
            "KacheCrashHarness was not found beside the test bundle; build it with `swift build --build-tests` or set KACHE_CRASH_HARNESS"
        )
        return try ChildProcess([executable] + arguments, environment: environment, stdout: .file(outputPath))
    }

    /// Starts the `kache` tool (`$KACHE_BINARY` overrides where it is) with
    /// `arguments`, its stdout into `outputPath`.
    static func kache(_ arguments: [String], outputPath: String) throws -> ChildProcess {
        let executable = try #require(
            product(named: "kache", environment: "KACHE_BINARY"),
            "kache was not found beside the test bundle; build it with `swift build --build-tests` or set KACHE_BINARY"
        )
        return try ChildProcess([executable] + arguments, stdout: .file(outputPath))
    }
}

/// Runs a system tool (`mount`, `chattr`) and returns its exit status, with
/// what it printed on stderr; 127 when it can't be started.
@discardableResult
func runSystemCommand(_ arguments: [String]) -> (status: Int32, stderr: String) {
    do {
        let outcome = try ChildProcess.run(arguments, timeout: .seconds(60))
        return (outcome.status, outcome.stderr)
    } catch {
        return (127, "\(error)")
    }
}
