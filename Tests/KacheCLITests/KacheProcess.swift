import Foundation
import Testing

/// Runs the built `kache` executable as a user would, and captures what it prints.
enum KacheProcess {
    /// What one run printed and returned.
    struct Outcome: CustomStringConvertible {
        var status: Int32
        var stdout: Data
        var stderr: String
        var output: String { String(decoding: stdout, as: UTF8.self) }

        var description: String {
            "exit \(status)\n--- stdout\n\(output)\n--- stderr\n\(stderr)"
        }

        /// The JSON it printed, decoded.
        func decoded<T: Decodable>(_: T.Type) throws -> T {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .iso8601
            return try decoder.decode(T.self, from: stdout)
        }
    }

    /// The executable: `$KACHE_BINARY`, else `kache` beside the test bundle
    /// (`swift build --build-tests` builds both into the same products folder).
    static let executable: URL? = {
        if let path = ProcessInfo.processInfo.environment["KACHE_BINARY"] { return URL(fileURLWithPath: path) }
        let bundle = Bundle.main.bundleURL
        let arguments0 = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        let candidates = [bundle, bundle.deletingLastPathComponent(), arguments0, arguments0.deletingLastPathComponent()]
            .map { $0.appendingPathComponent("kache") }
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0.path) }
    }()

    /// Runs `kache` with `arguments`, `input` on its standard input (empty when nil).
    static func run(_ arguments: [String], input: Data? = nil) throws -> Outcome {
        let executable = try #require(executable, "the kache executable was not found beside the tests; run `swift build --build-tests`")
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("kache-run-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let stdinURL = scratch.appendingPathComponent("stdin")
        let stdoutURL = scratch.appendingPathComponent("stdout")
        let stderrURL = scratch.appendingPathComponent("stderr")
        try (input ?? Data()).write(to: stdinURL)
        try Data().write(to: stdoutURL)
        try Data().write(to: stderrURL)

        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        // Files, not pipes: nothing can fill up and block while the process runs.
        let stdin = try FileHandle(forReadingFrom: stdinURL)
        let stdout = try FileHandle(forWritingTo: stdoutURL)
        let stderr = try FileHandle(forWritingTo: stderrURL)
        defer {
            try? stdin.close()
            try? stdout.close()
            try? stderr.close()
        }
        process.standardInput = stdin
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        process.waitUntilExit()
        return Outcome(
            status: process.terminationStatus,
            stdout: try Data(contentsOf: stdoutURL),
            stderr: String(decoding: try Data(contentsOf: stderrURL), as: UTF8.self)
        )
    }
}

/// Checks that `outcome` is a failure reported the way every failure must be:
/// the exit code, one line on stderr starting `kache: ` and containing
/// `message`, nothing on stdout, and no trace of a crash.
func expectFailure(
    _ outcome: KacheProcess.Outcome, status: Int32, message: String, sourceLocation: SourceLocation = #_sourceLocation
) {
    #expect(outcome.status == status, "\(outcome)", sourceLocation: sourceLocation)
    let lines = outcome.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast()
    #expect(lines.count == 1, "expected one line on stderr: \(outcome)", sourceLocation: sourceLocation)
    #expect(outcome.stderr.hasPrefix("kache: "), "\(outcome)", sourceLocation: sourceLocation)
    #expect(outcome.stderr.contains(message), "expected \"\(message)\": \(outcome)", sourceLocation: sourceLocation)
    #expect(outcome.stdout.isEmpty, "\(outcome)", sourceLocation: sourceLocation)
    #expect(!outcome.stderr.contains("Fatal error"), sourceLocation: sourceLocation)
}
