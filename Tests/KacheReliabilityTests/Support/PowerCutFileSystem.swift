import Foundation
import KacheTestSupport
#if canImport(Glibc)
import Glibc
#endif

/// powercutfs (Tests/PowerCut/powercutfs.c) mounted on a fresh folder: a file
/// system whose power can be cut. Writes since a file's last fsync, and
/// folder entries since the folder's last fsync, are lost in a cut.
///
/// ```swift
/// let fs = try PowerCutFileSystem.mounted()
/// // … write under fs.url, with fs.harnessEnvironment for a child process …
/// try fs.cut(keepingTornPagesWith: 42)   // unmounts, the disk holds the durable state
/// try fs.mount()                         // what survived
/// ```
///
/// Used by one thread at a time (the campaign's), hence `@unchecked Sendable`.
final class PowerCutFileSystem: @unchecked Sendable {
    private let scratch: ScratchFolder
    private let tools: Tools
    private var process: ChildProcess?

    /// The mount point.
    var url: URL { scratch.child("mount") }
    private var state: URL { scratch.child("state") }
    private var control: String { url.appendingPathComponent(".powercut").path }

    /// For a child process writing to the mount: its `syncfs` calls reach the
    /// file system (Linux does not forward syncfs to a FUSE server; see
    /// Tests/PowerCut/syncfs-preload.c).
    var harnessEnvironment: [String: String] {
        ["LD_PRELOAD": tools.preload, "POWERCUT_CONTROL": control]
    }

    private init(tools: Tools, label: String) {
        self.tools = tools
        scratch = ScratchFolder(label)
        try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        try? FileManager.default.createDirectory(at: state, withIntermediateDirectories: true)
    }

    /// Builds powercutfs if needed and mounts it on an empty folder.
    static func mounted(label: String = #function) throws -> PowerCutFileSystem {
        let tools = try Tools.built.get()
        let fs = PowerCutFileSystem(tools: tools, label: label)
        try fs.mount()
        return fs
    }

    /// Mounts the file system again (after a cut), showing what the disk holds.
    func mount() throws {
        precondition(process == nil, "already mounted")
        let started = try ChildProcess(
            [tools.fileSystem, state.path, url.path], stderr: .file(scratch.child("powercutfs.log").path)
        )
        let deadline = ContinuousClock.now + .seconds(20)
        var info = stat()
        while stat(control, &info) != 0 {
            if started.hasExited() || ContinuousClock.now > deadline {
                _ = try? started.kill()
                throw PowerCutError("powercutfs did not mount on \(url.path): \(log())")
            }
            usleep(2_000)
        }
        process = started
    }

    /// Makes everything written so far durable, as syncfs does on a disk.
    func sync() throws {
        try command("sync")
    }

    /// Cuts the power: everything not flushed is lost, and the file system
    /// unmounts. With `seed`, each file keeps a random prefix of its unsynced
    /// pages (a torn tail); without, none. `mount()` shows what is left.
    func cut(keepingTornPagesWith seed: UInt64?) throws {
        try command(seed.map { "cut \($0)" } ?? "cut")
        try waitForExit()
    }

    /// Cuts the power after every unsynced page reached the disk: only folder
    /// entries not flushed are lost.
    func cutKeepingEveryPage() throws {
        try command("cut all")
        try waitForExit()
    }

    /// Unmounts cleanly, keeping everything as it is.
    func unmount() throws {
        guard process != nil else { return }
        try command("unmount")
        try waitForExit()
    }

    deinit {
        if process != nil, (try? unmount()) == nil {
            _ = try? process?.kill()
            runSystemCommand(["fusermount3", "-u", "-z", url.path])
        }
    }

    private func command(_ text: String) throws {
        guard process != nil else { throw PowerCutError("powercutfs is not mounted") }
        let fd = open(control, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw PowerCutError("opening \(control): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        let bytes = Array("\(text)\n".utf8)
        guard write(fd, bytes, bytes.count) == bytes.count else {
            throw PowerCutError("`\(text)` failed: \(String(cString: strerror(errno))); \(log())")
        }
    }

    private func waitForExit() throws {
        guard let process else { return }
        self.process = nil
        let status = try process.wait(timeout: .seconds(60))
        guard status == 0 else { throw PowerCutError("powercutfs exited \(status): \(log())") }
    }

    private func log() -> String {
        String(decoding: FileManager.default.contents(atPath: scratch.child("powercutfs.log").path) ?? Data(), as: UTF8.self)
            .suffix(1000).description
    }
}

extension PowerCutFileSystem {
    /// Where the two built pieces are.
    private struct Tools {
        let fileSystem: String
        let preload: String

        /// Built once per test run by scripts/lib/build-powercutfs.sh, beside
        /// the crash harness; a failure says why the power-cut tests can't run.
        static let built: Result<Tools, PowerCutError> = build()

        private static func build() -> Result<Tools, PowerCutError> {
            guard access("/dev/fuse", R_OK | W_OK) == 0 else { return .failure(PowerCutError("/dev/fuse is missing or not usable")) }
            guard runSystemCommand(["sh", "-c", "command -v fusermount3"]).status == 0 else {
                return .failure(PowerCutError("fusermount3 is not installed (Debian: fuse3)"))
            }
            guard runSystemCommand(["pkg-config", "--exists", "fuse3"]).status == 0 else {
                return .failure(PowerCutError("libfuse3 is not installed (Debian: libfuse3-dev)"))
            }
            guard let harness = ChildProcess.product(named: "KacheCrashHarness", environment: "KACHE_CRASH_HARNESS") else {
                return .failure(PowerCutError("KacheCrashHarness was not found beside the test bundle"))
            }
            let folder = URL(fileURLWithPath: harness).deletingLastPathComponent().appendingPathComponent("powercut").path
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
                .deletingLastPathComponent().deletingLastPathComponent()
            let script = root.appendingPathComponent("scripts/lib/build-powercutfs.sh").path
            let result = runSystemCommand(["bash", script, folder])
            guard result.status == 0 else {
                return .failure(PowerCutError("building powercutfs failed (\(result.status)): \(result.stderr)"))
            }
            return .success(Tools(fileSystem: "\(folder)/powercutfs", preload: "\(folder)/syncfs-preload.so"))
        }
    }

    /// Whether the power-cut tests can run here; prints why not when they can't.
    static var isUsable: Bool {
        switch Tools.built {
        case .success: return true
        case let .failure(reason):
            print("Skipping the power-cut tests: \(reason)")
            return false
        }
    }
}

struct PowerCutError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
