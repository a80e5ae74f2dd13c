import KacheStorage
import Logging

/// Every line logged through its ``logger``, at every level, message and
/// metadata alike, for tests that read what was logged.
final class CapturedLog: Sendable {
    private let lines = Locked<[String]>([])

    /// A logger at `.trace` that writes here.
    var logger: Logger {
        Logger(label: "kache.redis.test") { [self] _ in Handler(log: self) }
    }

    /// What was logged so far, one entry a line.
    var text: [String] { lines.withLock { $0 } }

    private struct Handler: LogHandler {
        let log: CapturedLog
        var logLevel: Logger.Level = .trace
        var metadata: Logger.Metadata = [:]

        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }

        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }
            let line = "\(event.level) \(event.source) \(event.message) \(all) \(event.error.map { String(describing: $0) } ?? "")"
            log.lines.withLock { $0.append(line) }
        }
    }
}
