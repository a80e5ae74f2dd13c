import Foundation
import Kache

/// `hold DIR [UMASK]`: opens the cache directory as its writer (with the
/// octal file-mode mask UMASK, when given), stores the key `holder` (its pid,
/// as text) and `large` (64 KiB, in a file of its own, so that this process
/// makes its shard folder too), saves, stores `after-save` (so the `dirty` marker is there too),
/// prints `held PID` and sleeps until killed. When another process holds the
/// directory it prints `locked PID` (the pid the library's error names, `?`
/// when none) and exits 75.
struct HoldCommand {
    /// The key whose value is the holder's pid.
    static let holderKey = "holder"
    /// The exit status of a refused open.
    static let lockedStatus: Int32 = 75

    let directory: URL
    let fileModeMask: mode_t?

    init(arguments: [String]) throws(UsageError) {
        guard (1 ... 2).contains(arguments.count) else { throw UsageError("hold DIR [UMASK]") }
        directory = URL(fileURLWithPath: arguments[0])
        if arguments.count == 2 {
            guard let mask = mode_t(arguments[1], radix: 8) else { throw UsageError("hold DIR [UMASK] (UMASK in octal)") }
            fileModeMask = mask
        } else {
            fileModeMask = nil
        }
    }

    func run() -> Int32 {
        if let fileModeMask { umask(fileModeMask) }
        let cache: Kache
        do {
            cache = try Kache(directory: directory, configuration: Kache.Configuration(durability: .sync))
            try cache.set(Data("\(getpid())".utf8), forKey: HoldCommand.holderKey, ttl: .seconds(3600))
            try cache.set(Data(count: 64 << 10), forKey: "large", ttl: .seconds(3600))
            try cache.save()
            try cache.set(Data("after".utf8), forKey: "after-save", ttl: .seconds(3600))
        } catch let KacheError.directoryLocked(_, holderPID) {
            printLine("locked \(holderPID.map(String.init) ?? "?")")
            return HoldCommand.lockedStatus
        } catch {
            printLine("error \(error)")
            return 1
        }
        printLine("held \(getpid())")
        // The lock lives as long as the cache; the process ends by a signal.
        return withExtendedLifetime(cache) { () -> Int32 in
            while true { pause() }
        }
    }
}

/// Prints `line` on stdout at once (the parent waits for it).
func printLine(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}
