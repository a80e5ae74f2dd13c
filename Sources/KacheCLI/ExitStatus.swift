import ArgumentParser
import Foundation
import Kache

/// The exit codes of `kache`: the one place where an error becomes a code and
/// a one-line message. Listed in every command's help and in docs/CLI.md.
enum ExitStatus: Int32, CaseIterable, Sendable {
    case success = 0
    case damageFound = 1
    case usage = 2
    case notFound = 3
    case notACacheDirectory = 4
    case locked = 5
    case ioFailure = 6
    case damagedManifest = 7

    /// What the code means, as a phrase.
    var meaning: String {
        switch self {
        case .success: return "success"
        case .damageFound: return "damaged files or manifest found (verify; get of a damaged entry)"
        case .usage: return "usage error: unknown option, bad duration, invalid key or capacity"
        case .notFound: return "key not found or expired, unknown Pool or Queue, empty Queue"
        case .notACacheDirectory: return "the directory does not exist or is not a Kache cache directory"
        case .locked: return "another process holds the directory's writer lock"
        case .ioFailure: return "a file could not be read or written (permissions, disk full, I/O)"
        case .damagedManifest: return "the manifest is damaged (`kache verify --repair DIR` rebuilds it)"
        }
    }

    /// An "EXIT CODES" section for a command's help.
    static func helpSection(_ statuses: [ExitStatus]) -> String {
        "EXIT CODES\n" + statuses.map { "  \($0.rawValue)  \($0.meaning)" }.joined(separator: "\n")
    }
}

/// A command's failure: the exit status and, unless the command already
/// printed its own report, a one-line message for stderr.
struct CommandFailure: Error {
    var status: ExitStatus
    var message: String?

    init(_ status: ExitStatus, _ message: String?) {
        self.status = status
        self.message = message
    }

    /// The failure that `error`, thrown while working on `directory`, means.
    init(_ error: any Error, directory: String?) {
        let place = directory ?? "the cache directory"
        switch error {
        case let failure as CommandFailure:
            self = failure
        case let error as CacheDirectoryError:
            switch error {
            case let .missing(path):
                self.init(.notACacheDirectory, "there is no cache directory at \(path)")
            case let .notACacheDirectory(path, reason):
                self.init(.notACacheDirectory, "\(path) is not a Kache cache directory: \(reason)")
            case let .damagedManifest(path, reason):
                self.init(.damagedManifest, "the manifest \(path) is damaged (\(reason)); `kache verify --repair \(place)` moves it aside and rebuilds it")
            case let .locked(_, pid):
                self.init(.locked, CommandFailure.lockedMessage(place, pid))
            case .io:
                self.init(.ioFailure, error.description)
            }
        case let error as KacheError:
            switch error {
            case let .directoryLocked(_, pid):
                self.init(.locked, CommandFailure.lockedMessage(place, pid))
            case .emptyKey, .keyTooLong, .invalidTTL, .valueTooLarge, .invalidKeySpaceName, .invalidCapacity, .invalidConfiguration:
                self.init(.usage, error.description)
            default:
                self.init(.ioFailure, error.description)
            }
        default:
            self.init(.ioFailure, String(describing: error))
        }
    }

    private static func lockedMessage(_ directory: String, _ pid: Int32?) -> String {
        let holder = pid.map { "process \($0)" } ?? "another process (its pid is unknown)"
        return "\(directory) is locked by \(holder), which is writing to it; try again once it has closed the cache"
    }

    /// The message as one line.
    var line: String? {
        message.map { $0.split(whereSeparator: \.isNewline).joined(separator: " ") }
    }
}
