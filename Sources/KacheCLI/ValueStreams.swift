import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Values in and out of `kache`: standard input and output, or named files,
/// through plain POSIX calls so that a failure can say exactly why.
enum ValueStreams {
    /// Everything in the file at `path`, or on standard input when `path` is nil.
    static func readAll(from path: String?) throws -> Data {
        let fd = path.map { open($0, O_RDONLY | O_CLOEXEC) } ?? STDIN_FILENO
        guard fd >= 0 else { throw failure("read", path) }
        defer { if path != nil { close(fd) } }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 1 << 16)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count >= 0 else { throw failure("read", path) }
            if count == 0 { return data }
            data.append(buffer, count: count)
        }
    }

    /// Writes `data` to the file at `path` (created or replaced), or to standard output when `path` is nil.
    static func write(_ data: Data, to path: String?) throws {
        let fd = path.map { open($0, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644) } ?? STDOUT_FILENO
        guard fd >= 0 else { throw failure("write", path) }
        defer { if path != nil { close(fd) } }
        try data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let count = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { throw failure("write", path) }
                offset += count
            }
        }
    }

    /// Writes a line of text to standard output.
    static func printLine(_ text: String) {
        try? write(Data((text + "\n").utf8), to: nil)
    }

    /// Writes a line of text to standard error.
    static func printError(_ text: String) {
        let line = Array((text + "\n").utf8)
        _ = line.withUnsafeBytes { Glibc.write(STDERR_FILENO, $0.baseAddress, $0.count) }
    }

    private static func failure(_ operation: String, _ path: String?) -> CommandFailure {
        let code = errno
        let target = path ?? (operation == "read" ? "standard input" : "standard output")
        return CommandFailure(.ioFailure, "can't \(operation) \(target): \(String(cString: strerror(code)))")
    }
}
