import Foundation

/// A fresh folder under the temporary directory, for a cache, removed when
/// the value is released: hold it for as long as the folder is used.
final class ScratchDirectory: Sendable {
    let url: URL
    var path: String { url.path }

    init(_ label: String = #function) {
        let safe = label.filter { $0.isLetter || $0.isNumber }
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("kache-lifecycle-\(safe)-\(UUID().uuidString.prefix(8))", isDirectory: true)
    }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}
