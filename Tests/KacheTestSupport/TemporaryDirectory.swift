import Foundation

/// A fresh folder's path under the temporary directory, for a cache
/// directory or a test's files (made by whoever writes there first), removed
/// with everything in it when the value is released.
///
/// Hold the value for as long as the folder is used: in
/// `Kache(directory: TemporaryDirectory().url, …)` it is released (and the
/// folder, still empty, removed) before the cache creates its files, which
/// then stay behind in /tmp.
///
/// ```swift
/// let dir = TemporaryDirectory()
/// let cache = try Kache(directory: dir.url)
/// ```
public final class TemporaryDirectory: Sendable {
    public let url: URL
    public var path: String { url.path }

    /// A folder named after `label` (the calling function by default) and a random suffix.
    public init(_ label: String = #function) {
        let safe = label.filter { $0.isLetter || $0.isNumber }
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("kache-test-\(safe)-\(UUID().uuidString.prefix(8))", isDirectory: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
