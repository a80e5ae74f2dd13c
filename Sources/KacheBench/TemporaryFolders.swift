import Dispatch
import Foundation
import Synchronization

/// The temporary folders the process must not leave behind, even when it is
/// interrupted: on SIGINT, SIGTERM or SIGHUP they are removed before it exits.
enum TemporaryFolders {
    private struct State {
        var paths: [String] = []
        /// The signal being handled, once one arrives.
        var interruption: Int32?
    }

    private static let state = Mutex(State())
    private static let sources = Mutex<[any DispatchSourceSignal]>([])

    /// Adds `path` to what an interruption removes (and installs the handlers once).
    static func register(_ path: String) {
        state.withLock { $0.paths.append(path) }
        installHandlers()
    }

    /// Forgets `path` (it was removed in the ordinary way). If an
    /// interruption is under way, waits for its removal and exits as the
    /// signal would have: the run may have ended, or failed on a folder the
    /// removal took from under it, and either way the process must exit with
    /// the signal's status, not with the run's error.
    static func unregister(_ path: String) {
        let interruption = state.withLock { state in
            state.paths.removeAll { $0 == path }
            return state.interruption
        }
        if let interruption { _exit(128 + interruption) }
    }

    /// Runs `body`, which creates folders inside a registered one, unless an
    /// interruption is removing them: then it throws, so that nothing is
    /// created again behind the removal.
    static func creating<T>(_ body: () throws -> T) throws -> T {
        try state.withLock { state in
            guard state.interruption == nil else { throw Interrupted() }
            return try body()
        }
    }

    /// The error of a folder creation refused because the process is being interrupted.
    struct Interrupted: Error, CustomStringConvertible {
        var description: String { "interrupted" }
    }

    private static func installHandlers() {
        sources.withLock { sources in
            guard sources.isEmpty else { return }
            for signalNumber in [SIGINT, SIGTERM, SIGHUP] {
                signal(signalNumber, SIG_IGN)
                let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: .global())
                source.setEventHandler { removeAllAndExit(signal: signalNumber) }
                source.resume()
                sources.append(source)
            }
        }
    }

    /// Removes every registered folder and exits as the signal would have.
    /// The workload threads still run meanwhile: the lock keeps the bench from
    /// creating folders again, and a folder that gains a file while it is
    /// being removed (a write under way in it) is tried again.
    private static func removeAllAndExit(signal signalNumber: Int32) -> Never {
        FileHandle.standardError.write(Data("\nkache-bench: interrupted; removing its temporary files\n".utf8))
        state.withLock { state in
            state.interruption = signalNumber
            for path in state.paths {
                for _ in 0..<20 {
                    if (try? FileTree.remove(path)) != nil { break }
                    usleep(10_000)
                }
            }
        }
        _exit(128 + signalNumber)
    }
}
