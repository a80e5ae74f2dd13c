import Foundation
import KacheTestSupport
import Testing

/// Runs the built `kache` executable as a user would, and captures what it prints.
enum KacheProcess {
    typealias Outcome = ChildProcess.Outcome

    /// The executable: `$KACHE_BINARY`, else `kache` beside the test bundle
    /// (`swift build --build-tests` builds both into the same products folder).
    static let executable = ChildProcess.product(named: "kache", environment: "KACHE_BINARY")

    /// Runs `kache` with `arguments`, `input` on its standard input (empty when nil).
    static func run(_ arguments: [String], input: Data? = nil) throws -> Outcome {
        let executable = try #require(executable, "the kache executable was not found beside the tests; run `swift build --build-tests`")
        return try ChildProcess.run([executable] + arguments, input: input ?? Data(), timeout: .seconds(120))
    }
}

extension ChildProcess.Outcome {
    /// The JSON it printed, decoded.
    func decoded<T: Decodable>(_: T.Type) throws -> T {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return try decoder.decode(T.self, from: stdout)
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
