import Foundation
import KacheStorage

/// Everything that can go wrong in Kache, with the context a person needs.
///
/// Every failing call leaves what was stored before intact, with one
/// exception: when a flush fails after the new version is already in place
/// (in `fsync` durability, the flush of its folder or of its segment file),
/// the outcome is unknown. The call throws, and the key then holds the new
/// version or the old one, never anything else (docs/RELIABILITY.md).
public enum KacheError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The key is the empty string.
    case emptyKey
    /// The key's UTF-8 form is longer than the configured limit.
    case keyTooLong(bytes: Int, limit: Int)
    /// The time to live is zero or negative.
    case invalidTTL(Duration)
    /// The value is larger than the configured limit.
    case valueTooLarge(bytes: Int, limit: Int)
    /// Another process (or another instance in this one) writes to the directory.
    case directoryLocked(path: String, holderPID: Int32?)
    /// The directory can't be created, opened or written.
    case directoryUnusable(path: String, reason: String)
    /// The file system has no room for the entry.
    case diskFull(path: String)
    /// A file operation failed.
    case io(operation: String, path: String, errno: Int32)
    /// The cache was closed; open a new instance.
    case closed
    /// A configuration value is out of range.
    case invalidConfiguration(String)
    /// A key space name is empty, too long, or already names a key space of another kind.
    case invalidKeySpaceName(String, reason: String)
    /// One value's file would be larger than the whole disk budget.
    case exceedsDiskBudget(bytes: Int, budget: Int)
    /// A Pool or Queue capacity is zero or negative.
    case invalidCapacity(Int)
    /// `set(_:forKey:ttl:)` with an `Encodable` value could not encode it.
    case encodingFailed(key: String, reason: String)
    /// `value(forKey:as:)` found bytes that do not decode as the requested type.
    case decodingFailed(key: String, reason: String)

    /// A sentence that says what happened.
    public var description: String {
        switch self {
        case .emptyKey:
            return "The key is empty; keys must have at least one character."
        case let .keyTooLong(bytes, limit):
            return "The key is \(bytes) bytes long in UTF-8; the limit is \(limit) bytes."
        case let .invalidTTL(ttl):
            return "The time to live \(ttl) is not positive; an entry must live for some time."
        case let .valueTooLarge(bytes, limit):
            return "The value is \(bytes) bytes; the limit is \(limit) bytes."
        case let .directoryLocked(path, pid):
            let holder = pid.map { "process \($0)" } ?? "another process"
            return "The cache directory \(path) is locked by \(holder), which is writing to it."
        case let .directoryUnusable(path, reason):
            return "The cache directory \(path) can't be used: \(reason)."
        case let .diskFull(path):
            return "The disk holding \(path) is full; the entry was not stored."
        case let .io(operation, path, code):
            return "\(operation) failed for \(path): \(String(cString: strerror(code))) (errno \(code))."
        case .closed:
            return "The cache has been closed."
        case let .invalidConfiguration(reason):
            return "Invalid configuration: \(reason)."
        case let .invalidKeySpaceName(name, reason):
            return "The key space name \"\(name)\" can't be used: \(reason)."
        case let .exceedsDiskBudget(bytes, budget):
            return "The value needs \(bytes) bytes on disk, more than the whole disk budget of \(budget) bytes; nothing was evicted for it."
        case let .invalidCapacity(capacity):
            return "The capacity \(capacity) is not positive; a Pool or Queue holds at least one item."
        case let .encodingFailed(key, reason):
            return "The value for \"\(key)\" could not be encoded: \(reason)."
        case let .decodingFailed(key, reason):
            return "The value stored for \"\(key)\" could not be decoded: \(reason)."
        }
    }
}

extension KacheError {
    /// The public form of an error of the storage below the engine.
    init(_ error: StorageError) {
        switch error {
        case let .directoryLocked(path, holderPID): self = .directoryLocked(path: path, holderPID: holderPID)
        case let .directoryUnusable(path, reason): self = .directoryUnusable(path: path, reason: reason)
        case let .diskFull(path): self = .diskFull(path: path)
        case let .io(operation, path, code): self = .io(operation: operation, path: path, errno: code)
        }
    }
}

/// Runs a call into the storage, its errors handed on as `KacheError`.
func storage<R>(_ body: () throws(StorageError) -> R) throws(KacheError) -> R {
    do {
        return try body()
    } catch {
        throw KacheError(error)
    }
}
