import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Makes a cache directory's folders unwritable until released: nothing can
/// be created, renamed or deleted in them.
///
/// Permission bits don't stop root, so as root the folders are made
/// immutable (`chattr +i`, which ext4 and most local file systems support);
/// otherwise their mode becomes 0500. Either way the constructor checks that a
/// file really can't be created, and throws when it can.
final class ReadOnlyFolders {
    private let folders: [String]
    private let immutable: Bool

    /// The cache directory itself and its `tmp/`, `quarantine/`, `objects/` and shard folders.
    init(cacheDirectory: URL) throws {
        let root = cacheDirectory.path
        let shards = ((try? FileManager.default.contentsOfDirectory(atPath: "\(root)/objects")) ?? []).map { "\(root)/objects/\($0)" }
        folders = [root, "\(root)/tmp", "\(root)/quarantine", "\(root)/objects"] + shards
        immutable = geteuid() == 0
        for folder in folders {
            if immutable {
                let result = runSystemCommand(["chattr", "+i", folder])
                guard result.status == 0 else { throw Refusal("chattr +i \(folder) failed: \(result.stderr)") }
            } else {
                chmod(folder, 0o500)
            }
        }
        let probe = "\(root)/tmp/probe"
        let fd = open(probe, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        if fd >= 0 {
            close(fd)
            unlink(probe)
            release()
            throw Refusal("\(root)/tmp is still writable")
        }
    }

    /// Makes the folders writable again.
    func release() {
        for folder in folders {
            if immutable { runSystemCommand(["chattr", "-i", folder]) } else { chmod(folder, 0o700) }
        }
    }

    deinit {
        release()
    }

    struct Refusal: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}
