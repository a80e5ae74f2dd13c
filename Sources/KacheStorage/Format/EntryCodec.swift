import Foundation

/// Kache's file codec on its own, in memory: the work a `set` does to turn a
/// value into the bytes of its file (header, key, LZ4 payload, checksum), and
/// the work a read from disk does to turn them back, without any file.
///
/// Visible to this package only, for `kache-bench`: W6 sets this beside raw
/// LZ4 so that the cost of the framing and the checksum can be told apart
/// from the cost of the file system.
package enum EntryCodec {
    /// The complete file a top-level `set` would write for `payload` under
    /// `key` (compressed when at least `compressionThreshold` bytes and LZ4
    /// makes it smaller, then sealed with a sequence number and a checksum).
    /// - Complexity: O(n) in the payload.
    package static func encode(_ payload: Data, forKey key: String, compressionThreshold: Int) -> Data {
        var draft = EntryFile.draft(
            name: EntryName(space: "", key: key), kind: 0, payload: payload,
            expiry: .max, compressionThreshold: compressionThreshold
        )
        draft.seal(sequence: 1)
        return draft.bytes
    }

    /// The payload of `file`, decompressed, after the checks a read from disk
    /// makes (header and checksum); `nil` when the file is damaged.
    /// - Complexity: O(n) in the file's length.
    package static func decode(_ file: Data) -> Data? {
        file.withUnsafeBytes { raw in try? EntryFile.decode(raw).payload }
    }
}
