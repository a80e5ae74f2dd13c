import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The append floor: every entry as one record appended to a single file —
/// a 48-byte header, the key, then the value LZ4-compressed with the block
/// API (``RawLZ4Baseline``), or raw where LZ4 would not shrink it — through
/// one write buffer, with no index, no checksum and no expiry handling.
///
/// Exists so that a cache that appends small entries to segment files can be
/// read against the least work that writing the same bytes takes: its
/// records have this layout and length (Kache's header is 48 bytes too, and
/// a top-level entry's key space name is empty), so both sides hand the file
/// system the same number of bytes. The compression is part of the floor,
/// because a store that writes these bytes has to make them. Making the file
/// durable (`syncfs` or `fsync`) is left to the caller, which times it.
///
/// ```swift
/// let floor = try AppendBaseline(path: "/tmp/floor/records")
/// for (index, value) in values.enumerated() { try floor.append(value, forKey: WorkloadKeys.key(index), expiry: 0) }
/// try floor.close()   // writes what is buffered, then closes the file
/// ```
///
/// The caller owns the instance and must call ``close()``; an instance
/// dropped without it closes its file and drops what was still buffered.
public final class AppendBaseline {
    /// The length of a record's header, as in Kache's format.
    public static let headerSize = 48
    /// Values shorter than this are stored raw, as Kache's default `compressionThreshold` does.
    public static let compressionThreshold = 64
    /// Header flags: bit 0 says the payload is LZ4-compressed.
    public static let compressedFlag: UInt16 = 1

    /// The file the records go to (created, or truncated, by the initializer).
    public let path: String
    /// Records are written once this many bytes are buffered: one write call
    /// per buffer, as a store appending batches does.
    public let bufferCapacity: Int
    /// The bytes of every record appended so far, buffered or written.
    public private(set) var bytesAppended = 0

    private var descriptor: Int32
    private var pending: [UInt8] = []
    private var lz4 = RawLZ4Baseline(maxRawCount: 0)
    private var sequence: UInt64 = 0

    /// Creates (or truncates) the file at `path`.
    /// - Throws: ``RenameBaseline/SystemCallError`` if it can't be opened.
    public init(path: String, bufferCapacity: Int = 1 << 20) throws {
        precondition(bufferCapacity > 0, "a write buffer holds at least one byte")
        self.path = path
        self.bufferCapacity = bufferCapacity
        descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard descriptor >= 0 else { throw RenameBaseline.SystemCallError(call: "open", path: path, code: errno) }
        pending.reserveCapacity(bufferCapacity)
    }

    deinit {
        if descriptor >= 0 { _ = closeDescriptor(descriptor) }
    }

    /// The length of the record of a value stored in `storedCount` bytes under a key of `keyCount` UTF-8 bytes.
    public static func recordLength(keyCount: Int, storedCount: Int) -> Int {
        headerSize + keyCount + storedCount
    }

    /// Appends the record of `value` under `key`, expiring at `expiry`
    /// (nanoseconds since 1970), to the buffer; writes the buffer when full.
    /// - Returns: the record's length.
    /// - Throws: ``RenameBaseline/SystemCallError`` from a write.
    /// - Complexity: O(n) in the value.
    @discardableResult
    public func append(_ value: Data, forKey key: String, expiry: Int64) throws -> Int {
        precondition(descriptor >= 0, "append after close")
        if value.count > lz4.maxRawCount { lz4 = RawLZ4Baseline(maxRawCount: value.count) }
        let packed = value.count >= Self.compressionThreshold ? lz4.compressInPlace(value) : value.count
        let compressed = packed < value.count
        let storedCount = compressed ? packed : value.count
        var keyBytes = key
        let length = keyBytes.withUTF8 { keyBuffer -> Int in
            sequence += 1
            appendHeader(flags: compressed ? Self.compressedFlag : 0, expiry: expiry, rawCount: value.count,
                         storedCount: storedCount, keyCount: keyBuffer.count)
            pending.append(contentsOf: keyBuffer)
            return Self.recordLength(keyCount: keyBuffer.count, storedCount: storedCount)
        }
        if compressed {
            pending.append(contentsOf: lz4.output)
        } else {
            pending.append(contentsOf: value)
        }
        bytesAppended += length
        if pending.count >= bufferCapacity { try writePending() }
        return length
    }

    /// Writes what is buffered to the file (not to the device).
    /// - Throws: ``RenameBaseline/SystemCallError`` from a write.
    public func flush() throws {
        precondition(descriptor >= 0, "flush after close")
        try writePending()
    }

    /// Writes what is buffered, then closes the file. Safe to call twice.
    /// - Throws: ``RenameBaseline/SystemCallError`` from a write or the close.
    public func close() throws {
        guard descriptor >= 0 else { return }
        defer { descriptor = -1 }
        do {
            try writePending()
        } catch {
            _ = closeDescriptor(descriptor)
            throw error
        }
        guard closeDescriptor(descriptor) == 0 else { throw RenameBaseline.SystemCallError(call: "close", path: path, code: errno) }
    }

    // MARK: - Records

    /// The 48 bytes of a header, in Kache's field order (docs/FORMAT.md), the
    /// checksum left zero: computing one is work the floor does not do.
    private func appendHeader(flags: UInt16, expiry: Int64, rawCount: Int, storedCount: Int, keyCount: Int) {
        var header = (
            UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0), UInt64(0)
        )
        withUnsafeMutableBytes(of: &header) { bytes in
            bytes.copyBytes(from: "KACH".utf8)
            bytes.storeBytes(of: UInt16(1).littleEndian, toByteOffset: 12, as: UInt16.self)   // format version
            bytes.storeBytes(of: flags.littleEndian, toByteOffset: 14, as: UInt16.self)
            bytes.storeBytes(of: expiry.littleEndian, toByteOffset: 16, as: Int64.self)
            bytes.storeBytes(of: sequence.littleEndian, toByteOffset: 24, as: UInt64.self)
            bytes.storeBytes(of: UInt32(rawCount).littleEndian, toByteOffset: 32, as: UInt32.self)
            bytes.storeBytes(of: UInt32(storedCount).littleEndian, toByteOffset: 36, as: UInt32.self)
            bytes.storeBytes(of: UInt16(keyCount).littleEndian, toByteOffset: 40, as: UInt16.self)
            // 42: key-space name length 0 (top level), 44: kind 0, 45…47 reserved.
            pending.append(contentsOf: bytes)
        }
    }

    private func writePending() throws {
        try pending.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let written = writeDescriptor(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw RenameBaseline.SystemCallError(call: "write", path: path, code: errno)
                }
                offset += written
            }
        }
        pending.removeAll(keepingCapacity: true)
    }
}

// The POSIX calls that the type's own `close()` shadows inside it.
private func writeDescriptor(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(fd, bytes, count) }
private func closeDescriptor(_ fd: Int32) -> Int32 { close(fd) }
