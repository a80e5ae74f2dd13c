import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The crash harness: a separate process for the tests that need one to
/// die, to hold a lock, or to run under a resource limit.
///
/// ```
/// KacheCrashHarness write DIR SEED fsync|sync|async [THREADS] [SECONDS]
/// KacheCrashHarness hold DIR [UMASK]
/// KacheCrashHarness fill DIR LIMIT
/// KacheCrashHarness exhaust DIR PREFIX COUNT
/// ```
///
/// It uses only the public API of Kache, as an application would. It exits
/// when its parent dies, so a test that fails never leaves it running.
@main
enum KacheCrashHarness {
    static func main() {
        exitWhenOrphaned()
        let arguments = Array(CommandLine.arguments.dropFirst())
        do throws(UsageError) {
            let rest = Array(arguments.dropFirst())
            switch arguments.first {
            case "write": exit(try WriteCommand(arguments: rest).run())
            case "hold": exit(try HoldCommand(arguments: rest).run())
            case "fill": exit(try FillCommand(arguments: rest).run())
            case "exhaust": exit(try ExhaustCommand(arguments: rest).run())
            default: throw UsageError("write|hold|fill|exhaust …")
            }
        } catch {
            FileHandle.standardError.write(Data("usage: KacheCrashHarness \(error.usage)\n".utf8))
            exit(64)
        }
    }
}

/// Watches the parent process from a thread and exits as soon as it is gone
/// (the process is then adopted, and its parent pid changes).
private func exitWhenOrphaned() {
    let parent = getppid()
    Thread.detachNewThread {
        while getppid() == parent { usleep(50_000) }
        exit(71)
    }
}

/// The arguments did not match a command's usage.
struct UsageError: Error {
    let usage: String

    init(_ usage: String) {
        self.usage = usage
    }
}
