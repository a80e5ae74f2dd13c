import Foundation

/// A store that users would otherwise pick, measured beside Kache on W1 and
/// W8 with the same keys, values and expiries (issue 32). A peer is used by
/// one thread at a time, so it is no more Sendable than its C handle.
protocol PeerStore: AnyObject {
    /// The baseline's name in the report: the store and how it is configured.
    static var name: String { get }

    /// Opens the store kept in `folder` (an existing folder), creating it if
    /// the folder is empty, as far as a first get could follow.
    init(folder: String) throws

    /// Stores `value` under `key` with its expiry (Unix nanoseconds), one
    /// write of the store's own per call.
    func set(_ value: Data, forKey key: String, expiry: Int64) throws

    /// Returns once every set so far would survive a power cut.
    func makeDurable() throws

    /// The value and expiry stored under `key`, or nil.
    func entry(forKey key: String) throws -> PeerEntry?

    /// The library and its version, e.g. "SQLite 3.40.1".
    var version: String { get }

    /// Closes the store; nothing is called on it afterwards.
    func close() throws
}

/// What a peer read back for a key.
struct PeerEntry: Equatable {
    var value: Data
    var expiry: Int64
}

/// A peer's C call that failed, with the library's own message.
struct PeerFailure: Error, CustomStringConvertible {
    var peer: String
    var call: String
    var message: String

    var description: String { "\(peer): \(call) failed: \(message)" }
}

/// Calls `body` with the UTF-8 bytes of `key`: in place for a native string
/// (every generated key is one), else from a copy.
func withUTF8Bytes<Result>(of key: String, _ body: (UnsafeRawBufferPointer) throws -> Result) rethrows -> Result {
    if let result = try key.utf8.withContiguousStorageIfAvailable({ try body(UnsafeRawBufferPointer($0)) }) {
        return result
    }
    return try Array(key.utf8).withUnsafeBytes(body)
}
