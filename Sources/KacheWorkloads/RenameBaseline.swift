import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The file-system floor: one file per key, written to a temporary name and
/// renamed into place with plain POSIX calls, with no header, checksum,
/// compression or index.
///
/// Exists so that a disk-backed cache's write figures (W1 in `sync` and
/// `fsync` mode, W6) can be read against the least work an atomic
/// file-per-key store can do on this file system (DESIGN.md measured
/// ~50–60 µs per file without fsync, ~300 µs with).
///
/// Files are named like the key, in 256 shard folders `00`…`ff` chosen by a
/// stable hash of the key, so that no folder grows past what one listing
/// handles well. Keys must be valid file names; workload keys are.
///
/// ```swift
/// let floor = try RenameBaseline(directory: "/tmp/floor", fsync: true)
/// let seconds = try floor.writeFiles(values)   // values[i] under key(i)
/// ```
public struct RenameBaseline: Sendable {
    /// The folder holding the shard folders.
    public let directory: String
    /// Whether each write flushes the file and then its folder to the device
    /// (durability mode `fsync`); without, a write ends at the rename (`sync`).
    public let fsync: Bool

    /// The number of shard folders.
    public static let shardCount = 256

    /// A system call that failed, with the path it was given.
    public struct SystemCallError: Error, CustomStringConvertible {
        /// The call, such as "open" or "rename".
        public let call: String
        /// The path it was called on.
        public let path: String
        /// The `errno` it left.
        public let code: Int32

        /// The failure as a sentence.
        public var description: String {
            "\(call) failed for \(path): \(String(cString: strerror(code))) (errno \(code))"
        }
    }

    /// Uses `directory` and creates it and its shard folders if missing.
    /// - Throws: ``SystemCallError`` if a folder cannot be created.
    public init(directory: String, fsync: Bool = false) throws {
        self.directory = directory
        self.fsync = fsync
        try Self.makeDirectory(directory)
        for shard in 0..<Self.shardCount {
            try Self.makeDirectory(directory + "/" + Self.shardName(shard))
        }
    }

    /// The path of the file holding `key`.
    public func path(forKey key: String) -> String {
        directory + "/" + Self.shardName(Self.shard(of: key)) + "/" + key
    }

    /// Writes `value` as the file of `key`: to a temporary file in the same
    /// shard folder, then renamed over the old one, so a reader sees the old
    /// file or the new one, never part of one. Not for concurrent writers of
    /// the same key (they share the temporary name).
    /// - Throws: ``SystemCallError`` from open, write, fsync, close or rename.
    public func write(_ value: Data, forKey key: String) throws {
        let target = path(forKey: key)
        let folder = String(target[..<target.lastIndex(of: "/")!])
        let temporary = folder + "/." + key + ".tmp"

        let fd = open(temporary, O_WRONLY | O_CREAT | O_TRUNC, 0o644)
        guard fd >= 0 else { throw SystemCallError(call: "open", path: temporary, code: errno) }
        do {
            try value.withUnsafeBytes { bytes in
                var offset = 0
                while offset < bytes.count {
                    let written = systemWrite(fd, bytes.baseAddress! + offset, bytes.count - offset)
                    if written < 0 {
                        if errno == EINTR { continue }
                        throw SystemCallError(call: "write", path: temporary, code: errno)
                    }
                    offset += written
                }
            }
            if fsync, systemFsync(fd) != 0 { throw SystemCallError(call: "fsync", path: temporary, code: errno) }
        } catch {
            close(fd)
            throw error
        }
        guard close(fd) == 0 else { throw SystemCallError(call: "close", path: temporary, code: errno) }
        guard rename(temporary, target) == 0 else { throw SystemCallError(call: "rename", path: target, code: errno) }
        if fsync { try Self.flushDirectory(folder) }
    }

    /// The contents of the file of `key`.
    /// - Throws: ``SystemCallError`` from open, fstat or read (ENOENT for a missing key).
    public func read(forKey key: String) throws -> Data {
        let source = path(forKey: key)
        let fd = open(source, O_RDONLY)
        guard fd >= 0 else { throw SystemCallError(call: "open", path: source, code: errno) }
        defer { close(fd) }
        var status = stat()
        guard fstat(fd, &status) == 0 else { throw SystemCallError(call: "fstat", path: source, code: errno) }
        var data = Data(count: Int(status.st_size))
        try data.withUnsafeMutableBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let got = systemRead(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if got < 0, errno == EINTR { continue }
                guard got > 0 else { throw SystemCallError(call: "read", path: source, code: got == 0 ? EIO : errno) }
                offset += got
            }
        }
        return data
    }

    /// Writes `values[i]` as the file of `WorkloadKeys.key(i)`, in order, and
    /// returns the elapsed wall time in seconds.
    /// - Throws: the first ``SystemCallError`` of a write.
    public func writeFiles(_ values: [Data]) throws -> Double {
        let start = ContinuousClock.now
        for (index, value) in values.enumerated() {
            try write(value, forKey: WorkloadKeys.key(index))
        }
        let elapsed = (ContinuousClock.now - start).components
        return Double(elapsed.seconds) + Double(elapsed.attoseconds) * 1e-18
    }

    // MARK: - Paths and folders

    /// The shard of `key`: the low byte of its 64-bit FNV-1a hash, stable
    /// across runs and processes (unlike `hashValue`).
    static func shard(of key: String) -> Int {
        var hash: UInt64 = 0xCBF2_9CE4_8422_2325
        for byte in key.utf8 {
            hash = (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
        }
        return Int(hash & 0xFF)
    }

    private static func shardName(_ shard: Int) -> String {
        let hex = String(shard, radix: 16)
        return hex.count == 1 ? "0" + hex : hex
    }

    private static func makeDirectory(_ path: String) throws {
        guard mkdir(path, 0o755) == 0 || errno == EEXIST else {
            throw SystemCallError(call: "mkdir", path: path, code: errno)
        }
    }

    /// Flushes a folder's entries, so that a rename into it survives a crash.
    private static func flushDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw SystemCallError(call: "open", path: path, code: errno) }
        defer { close(fd) }
        guard systemFsync(fd) == 0 else { throw SystemCallError(call: "fsync", path: path, code: errno) }
    }
}

// The POSIX calls whose names the type's own members (`write`, `read`,
// `fsync`) shadow inside it; at file scope they resolve to the C library.
private func systemWrite(_ fd: Int32, _ bytes: UnsafeRawPointer, _ count: Int) -> Int { write(fd, bytes, count) }
private func systemRead(_ fd: Int32, _ bytes: UnsafeMutableRawPointer, _ count: Int) -> Int { read(fd, bytes, count) }
private func systemFsync(_ fd: Int32) -> Int32 { fsync(fd) }
