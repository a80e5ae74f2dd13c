import Foundation

/// Runs a command to its end without blocking a thread of the test pool:
/// its exit is polled, and a command that outlives `timeout` is killed (by
/// its own pid) and reported.
enum ChildProcess {
    struct Outcome {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    struct TimedOut: Error, CustomStringConvertible {
        var command: [String]
        var description: String { "\(command.joined(separator: " ")) did not finish in time and was killed" }
    }

    static func run(_ command: [String], environment: [String: String] = [:], timeout: Duration) async throws -> Outcome {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("kache-redis-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("out"), errURL = scratch.appendingPathComponent("err")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL), err = try FileHandle(forWritingTo: errURL)
        defer {
            try? out.close()
            try? err.close()
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = out
        process.standardError = err
        try process.run()
        let pid = process.processIdentifier
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = -1
        var timedOut = false
        // Polled rather than awaited through terminationHandler, which inside
        // the test runner was seen never to fire; each wait is 20 ms of sleep,
        // never a blocked thread.
        while true {
            var raw: Int32 = 0
            let reaped = waitpid(pid, &raw, WNOHANG)
            if reaped == pid {
                status = (raw & 0x7F) == 0 ? (raw >> 8) & 0xFF : 128 + (raw & 0x7F)
                break
            }
            if reaped == -1 || !process.isRunning {
                status = process.isRunning ? -1 : process.terminationStatus
                break
            }
            if ContinuousClock.now >= deadline {
                kill(pid, SIGKILL)
                timedOut = true
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        let outcome = Outcome(
            status: status,
            stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
            stderr: String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
        )
        if timedOut { throw TimedOut(command: command) }
        return outcome
    }
}
