import Foundation
import KacheStorage

/// An entry as a shared tier (KacheRedis) stores it: the very record format of
/// the entry files (docs/FORMAT.md), header, key, key space, LZ4 payload and
/// checksum, so that both tiers agree on what a value is and when it ends.
///
/// A thin public face over the file format, which stays internal: the sequence
/// field is 0 (write order means nothing across machines), all else is what the
/// local file holds.
///
/// ```swift
/// let bytes = SharedTierRecord.encode(value, key: "user:1", expiry: expiryNanoseconds)
/// let record = try SharedTierRecord.decode(bytes)   // record.value == value
/// ```
public struct SharedTierRecord: Sendable, Equatable {
    /// The key space a record belongs to.
    public enum Kind: Sendable, Equatable {
        /// The top level of `Kache.set(_:forKey:ttl:)`.
        case topLevel
        /// A Pool.
        case pool
        /// A Queue.
        case queue
    }

    /// Why bytes are not a record: the file format's own word for the damage.
    public struct DecodingError: Error, Sendable, Equatable, CustomStringConvertible {
        /// What is wrong, as a sentence.
        public let description: String
    }

    /// The key, as written (NFC).
    public var key: String
    /// The key space's name, empty at the top level.
    public var space: String
    /// Its kind.
    public var kind: Kind
    /// The absolute expiry, nanoseconds since 1970-01-01T00:00:00Z.
    public var expiry: Int64
    /// The value, decompressed.
    public var value: Data

    /// The record of `value`, compressed with LZ4 as a local file would be.
    /// - Complexity: O(n) in the value.
    public static func encode(
        _ value: Data, key: String, space: String = "", kind: Kind = .topLevel, expiry: Int64, compressionThreshold: Int = 64
    ) -> Data {
        let internalKind: KeySpace.Kind = switch kind {
        case .topLevel: .topLevel
        case .pool: .pool
        case .queue: .queue
        }
        var draft = EntryFile.draft(
            name: EntryName(space: space, key: key), kind: internalKind.rawValue, payload: value, expiry: expiry,
            compressionThreshold: compressionThreshold
        )
        draft.seal(sequence: 0)
        return draft.bytes
    }

    /// Checks and decodes a record (header, lengths, checksum, LZ4). Never traps on hostile bytes.
    public static func decode(_ bytes: Data) throws(DecodingError) -> SharedTierRecord {
        let decoded: (header: EntryFile.Header, payload: Data)
        do {
            decoded = try EntryFile.decode(bytes)
        } catch {
            throw DecodingError(description: error.description)
        }
        // A tombstone (a removal in a segment file) is never a value.
        guard !decoded.header.isTombstone else { throw DecodingError(description: "a tombstone, not a value") }
        let kind: Kind = switch KeySpace.Kind(record: decoded.header.kind) {
        case .topLevel: .topLevel
        case .pool: .pool
        case .queue: .queue
        }
        return SharedTierRecord(key: decoded.header.key, space: decoded.header.space, kind: kind, expiry: decoded.header.expiry, value: decoded.payload)
    }

    /// The expiry field of a record, read without checking or decoding the rest
    /// (for a script or a quick skip); nil when `bytes` is shorter than a header.
    public static func expiry(of bytes: some Collection<UInt8>) -> Int64? {
        guard bytes.count >= EntryFile.headerSize else { return nil }
        var value: UInt64 = 0
        for (shift, byte) in bytes.dropFirst(EntryFile.Offset.expiry).prefix(8).enumerated() {
            value |= UInt64(byte) << (8 * UInt64(shift))
        }
        return Int64(bitPattern: value)
    }

    /// The byte offset of the little-endian Int64 expiry in a record.
    public static let expiryOffset = EntryFile.Offset.expiry
}
