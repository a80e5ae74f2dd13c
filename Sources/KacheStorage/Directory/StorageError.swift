import Foundation

/// What can go wrong below the engine: the directory's files and folders.
/// The engine hands each on as the public `KacheError` case of the same name.
package enum StorageError: Error, Sendable, Equatable {
    /// Another process (or another instance in this one) holds the directory's lock.
    case directoryLocked(path: String, holderPID: Int32?)
    /// The directory can't be created, opened or written.
    case directoryUnusable(path: String, reason: String)
    /// The file system has no room.
    case diskFull(path: String)
    /// A file operation failed for another reason (not damage: the bytes are unknown).
    case io(operation: String, path: String, errno: Int32)

    /// A failed file operation's `errno`, as the matching error: a full disk
    /// or quota, a refusal, or any other failure.
    package static func fileOperation(_ operation: String, path: String, errno code: Int32) -> StorageError {
        switch code {
        case ENOSPC, EDQUOT, EFBIG: return .diskFull(path: path)
        case EACCES, EPERM, EROFS: return .directoryUnusable(path: path, reason: "\(operation) was refused (\(String(cString: strerror(code))))")
        default: return .io(operation: operation, path: path, errno: code)
        }
    }
}
