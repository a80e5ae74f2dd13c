import KacheStorage
import Foundation
import KacheTestSupport
import Testing

/// `KacheRedisPeer`, a second process with a tiered cache of its own, driven
/// one command line at a time. Its answers are read by a thread of its own
/// (not one of the test pool's), and every wait for one is bounded.
final class PeerProcess: Sendable {
    private let child: ChildProcess
    private let input: FileHandle
    private let lines = LineBuffer()

    /// Lines read and not yet taken.
    final class LineBuffer: Sendable {
        private let lines = Locked<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        func takeFirst() -> String? { lines.withLock { $0.isEmpty ? nil : $0.removeFirst() } }
    }

    init(seeds: String) throws {
        let executable = try #require(
            ChildProcess.product(named: "KacheRedisPeer", environment: "KACHE_REDIS_PEER"), "KacheRedisPeer was not built beside the tests"
        )
        let stdin = Pipe(), stdout = Pipe()
        child = try ChildProcess(
            [executable], environment: ["KACHE_REDIS_SEEDS": seeds],
            stdin: .descriptor(stdin.fileHandleForReading.fileDescriptor), stdout: .descriptor(stdout.fileHandleForWriting.fileDescriptor)
        )
        // The child has its own copies: without closing ours, its stdin would
        // never reach end of file, nor our reader the end of its stdout.
        try stdin.fileHandleForReading.close()
        try stdout.fileHandleForWriting.close()
        input = stdin.fileHandleForWriting
        let reader = stdout.fileHandleForReading
        let thread = Thread { [lines] in
            var pending = Data()
            while true {
                let chunk = reader.availableData
                if chunk.isEmpty { return }
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    let line = String(decoding: pending[..<newline], as: UTF8.self)
                    pending.removeSubrange(...newline)
                    lines.append(line)
                }
            }
        }
        thread.start()
    }

    /// Sends `command` and returns its answer line.
    func ask(_ command: String, timeout: Duration = .seconds(10)) async throws -> String {
        input.write(Data((command + "\n").utf8))
        return try await nextLine(timeout: timeout)
    }

    /// The next line the peer printed, waiting at most `timeout`.
    func nextLine(timeout: Duration = .seconds(10)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let line = lines.takeFirst() { return line }
            try await Task.sleep(for: .milliseconds(1))
        }
        throw PeerTimeout()
    }

    struct PeerTimeout: Error {}

    /// Asks the peer to quit, and kills it (by its pid) if it has not within 5 s.
    func stop() async {
        input.write(Data("quit\n".utf8))
        if (try? await child.exit(within: .seconds(5))) == nil { try? child.kill() }
    }
}
