import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Prints journal lines on stdout, each with a single `write(2)` under a lock,
/// so that lines from several threads never interleave and a line is on its
/// way to the reader before the next operation starts. Nothing is buffered in
/// the process: what SIGKILL interrupts is at worst the last line, cut short.
final class Journal: Sendable {
    private let lock = Mutex<Void>(())
    private let descriptor: Int32
    private let nextID = Atomic<UInt64>(1)

    init(descriptor: Int32 = STDOUT_FILENO) {
        self.descriptor = descriptor
    }

    /// The current wall-clock time, in the journal's unit.
    static func now() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }

    func write(_ line: JournalLine) {
        let bytes = Array(line.text.utf8)
        lock.withLock { _ in
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress! + offset, $0.count - offset) }
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { exit(70) }  // the reader is gone: nothing left to prove
                offset += written
            }
        }
    }

    /// Journals `operation`, runs it, and journals its acknowledgement (with
    /// what `body` returns, for a pop) or its failure.
    func record(_ operation: JournalLine.Operation, _ body: () throws -> UInt64?) {
        let id = nextID.wrappingAdd(1, ordering: .relaxed).oldValue
        write(.begin(id: id, at: Journal.now(), operation: operation))
        do {
            let popped = try body()
            write(.ack(id: id, at: Journal.now(), popped: popped))
        } catch {
            write(.failure(id: id, at: Journal.now(), error: "\(error)"))
        }
    }
}
