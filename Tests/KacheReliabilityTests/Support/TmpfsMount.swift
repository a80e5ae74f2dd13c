import Foundation

/// A small tmpfs mounted on a fresh folder: a file system that really fills
/// up. Needs the right to mount (root, or CAP_SYS_ADMIN); `mount()` returns
/// nil where that is refused, and the tests fall back to a file-size limit.
final class TmpfsMount {
    let scratch: ScratchFolder
    var url: URL { scratch.child("fs") }

    private init(scratch: ScratchFolder) {
        self.scratch = scratch
    }

    /// Mounts a tmpfs of `bytes` bytes, or returns nil (with the reason) when it can't.
    static func mount(bytes: Int, label: String = #function) -> (mount: TmpfsMount?, refusal: String?) {
        let scratch = ScratchFolder(label)
        let mount = TmpfsMount(scratch: scratch)
        try? FileManager.default.createDirectory(at: mount.url, withIntermediateDirectories: true)
        let result = runSystemCommand(["mount", "-t", "tmpfs", "-o", "size=\(bytes),mode=0700", "tmpfs", mount.url.path])
        guard result.status == 0 else { return (nil, "mount exited \(result.status): \(result.stderr)") }
        return (mount, nil)
    }

    deinit {
        runSystemCommand(["umount", "-l", url.path])
    }
}
