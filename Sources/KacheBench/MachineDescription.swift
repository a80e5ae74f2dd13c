import Foundation

/// The machine and build a run was taken on, printed above the table and
/// written into the JSON, so that figures from two runs can be told apart.
struct MachineDescription: Codable {
    var cores: Int
    var cpu: String?
    var memoryBytes: Int?
    var operatingSystem: String
    var kernel: String
    var swiftVersion: String
    var gitCommit: String?
    var gitDirty: Bool?
    /// The file system the cache directory is on ("ext4", "tmpfs", …): disk figures mean little on tmpfs.
    var fileSystem: String

    /// Describes this machine, with `directory` the folder whose file system
    /// the bench writes to, and `scratch` a folder removed afterwards (the
    /// `swift` driver leaves a folder in `$TMPDIR` each time it runs).
    static func current(directory: URL, scratch: URL) -> MachineDescription {
        var name = utsname()
        uname(&name)
        let release = withUnsafeBytes(of: &name.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
        // The commit of the checkout this binary was built in (it sits in
        // <checkout>/.build/…), whatever folder the bench was started from.
        let checkout = Bundle.main.executableURL?.deletingLastPathComponent().path ?? FileManager.default.currentDirectoryPath
        let commit = run("git", ["-C", checkout, "rev-parse", "HEAD"], scratch: scratch)
        return MachineDescription(
            cores: ProcessInfo.processInfo.activeProcessorCount,
            cpu: procField("/proc/cpuinfo", "model name"),
            memoryBytes: procField("/proc/meminfo", "MemTotal").flatMap { Int($0.filter(\.isNumber)) }.map { $0 * 1024 },
            operatingSystem: osRelease() ?? ProcessInfo.processInfo.operatingSystemVersionString,
            kernel: release,
            swiftVersion: swiftVersion(scratch: scratch),
            gitCommit: commit,
            gitDirty: commit == nil ? nil : run("git", ["-C", checkout, "status", "--porcelain", "--untracked-files=no"], scratch: scratch).map { !$0.isEmpty },
            fileSystem: fileSystemName(of: directory)
        )
    }

    /// One line for the top of the table.
    var summary: String {
        var parts = ["\(cores) cores"]
        if let cpu { parts.append(cpu) }
        parts.append("\(operatingSystem) (Linux \(kernel))")
        parts.append(swiftVersion)
        if let gitCommit { parts.append("commit \(gitCommit.prefix(10))" + (gitDirty == true ? " + local changes" : "")) }
        parts.append("\(fileSystem) file system")
        return parts.joined(separator: ", ")
    }

    // MARK: - Sources

    /// The version of the compiler that built this binary: the `swift` on the
    /// PATH is asked first (its first line), else the compiler checks of the build.
    private static func swiftVersion(scratch: URL) -> String {
        if let line = run("swift", ["--version"], scratch: scratch)?.split(separator: "\n").first(where: { $0.contains("Swift version") }) {
            return line.trimmingCharacters(in: .whitespaces)
        }
        #if compiler(>=6.3)
        return "Swift 6.3 or later"
        #elseif compiler(>=6.2)
        return "Swift 6.2"
        #elseif compiler(>=6.1)
        return "Swift 6.1"
        #else
        return "Swift 6.0"
        #endif
    }

    private static func osRelease() -> String? {
        guard let text = try? String(contentsOfFile: "/etc/os-release", encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("PRETTY_NAME=") {
            return line.dropFirst("PRETTY_NAME=".count).trimmingCharacters(in: CharacterSet(charactersIn: "\""))
        }
        return nil
    }

    private static func procField(_ path: String, _ name: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(name) {
            guard let colon = line.firstIndex(of: ":") else { continue }
            return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return nil
    }

    /// The type of the file system mounted nearest above `directory`, from /proc/self/mounts.
    private static func fileSystemName(of directory: URL) -> String {
        guard let mounts = try? String(contentsOfFile: "/proc/self/mounts", encoding: .utf8) else { return "unknown" }
        var path = directory.standardizedFileURL
        // The directory may not exist yet: resolve links through its nearest existing ancestor.
        while !FileManager.default.fileExists(atPath: path.path), path.pathComponents.count > 1 { path.deleteLastPathComponent() }
        let resolved = path.resolvingSymlinksInPath().path
        var best = (length: -1, type: "unknown")
        for line in mounts.split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let point = fields[1].replacingOccurrences(of: "\\040", with: " ")
            let contains = point == "/" || resolved == point || resolved.hasPrefix(point + "/")
            if contains, point.count >= best.length { best = (point.count, String(fields[2])) }
        }
        return best.type
    }

    /// The trimmed standard output of `command arguments`, run with `scratch`
    /// as its `$TMPDIR`, or nil if it can't run or fails.
    private static func run(_ command: String, _ arguments: [String], scratch: URL) -> String? {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [command] + arguments
        var environment = ProcessInfo.processInfo.environment
        environment["TMPDIR"] = scratch.path
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            return nil
        }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { return nil }
        return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
