import Foundation

/// One line of the journal the `write` command prints on stdout: what it was
/// about to do (`begin`), and that the library call returned (`ack`) or threw
/// (`failure`). The crash tests replay these lines to know what the cache
/// promised before the process was killed.
///
/// Fields are separated by tabs; every time is wall-clock nanoseconds since
/// 1970, the unit of the cache's own expiry times. An operation is
/// acknowledged only by its `ack` line, written after the call returned, so
/// a line cut short by SIGKILL (no newline) never counts.
///
/// ```
/// open   4242  sync  1732312800000000000
/// B      17  1732312800001000000  set  crash-pool  p3  73014444049  3600000000000
/// A      17  1732312800001090000
/// B      18  1732312800001100000  pop  crash-queue
/// A      18  1732312800001150000  73014444012
/// ```
public enum JournalLine: Equatable, Sendable {
    /// The writer opened the cache directory.
    case opened(pid: Int32, durability: String, at: Int64)
    /// The writer is about to run `operation`, numbered `id`, at `at`.
    case begin(id: UInt64, at: Int64, operation: Operation)
    /// Operation `id` returned at `at`; `popped` is a Queue pop's item (nil when the Queue was empty).
    case ack(id: UInt64, at: Int64, popped: UInt64?)
    /// Operation `id` threw.
    case failure(id: UInt64, at: Int64, error: String)
    /// The writer read back bytes that are not what it stored: the test fails on this line.
    case corruption(String)

    /// A state-changing call on the cache.
    public enum Operation: Equatable, Sendable {
        /// `set` of the value `version` under `key` in key space `space` ("" for the top level).
        case set(space: String, key: String, version: UInt64, ttl: Int64)
        /// `removeValue(forKey:)`.
        case remove(space: String, key: String)
        /// `push` of Queue item `item`.
        case push(queue: String, item: UInt64, ttl: Int64)
        /// `pop`.
        case pop(queue: String)
        /// `save()`.
        case save
        /// `sweep()`.
        case sweep
    }

    /// The line as printed, with its newline.
    public var text: String {
        let fields: [String]
        switch self {
        case let .opened(pid, durability, at):
            fields = ["open", "\(pid)", durability, "\(at)"]
        case let .begin(id, at, operation):
            fields = ["B", "\(id)", "\(at)"] + operation.fields
        case let .ack(id, at, popped):
            fields = ["A", "\(id)", "\(at)"] + (popped.map { ["\($0)"] } ?? [])
        case let .failure(id, at, error):
            fields = ["E", "\(id)", "\(at)", JournalLine.flatten(error)]
        case let .corruption(message):
            fields = ["X", JournalLine.flatten(message)]
        }
        return fields.joined(separator: "\t") + "\n"
    }

    /// Parses one line (without its newline); nil for anything malformed,
    /// such as a line cut short by the kill.
    public init?(parsing line: Substring) {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false).map(String.init)
        switch (fields.first, fields.count) {
        case ("open", 4):
            guard let pid = Int32(fields[1]), let at = Int64(fields[3]) else { return nil }
            self = .opened(pid: pid, durability: fields[2], at: at)
        case ("B", 4...):
            guard let id = UInt64(fields[1]), let at = Int64(fields[2]),
                  let operation = Operation(fields: Array(fields.dropFirst(3))) else { return nil }
            self = .begin(id: id, at: at, operation: operation)
        case ("A", 3), ("A", 4):
            guard let id = UInt64(fields[1]), let at = Int64(fields[2]) else { return nil }
            let popped = fields.count == 4 ? UInt64(fields[3]) : nil
            if fields.count == 4, popped == nil { return nil }
            self = .ack(id: id, at: at, popped: popped)
        case ("E", 4):
            guard let id = UInt64(fields[1]), let at = Int64(fields[2]) else { return nil }
            self = .failure(id: id, at: at, error: fields[3])
        case ("X", 2):
            self = .corruption(fields[1])
        default:
            return nil
        }
    }

    /// Every complete line of `journal`; a last line without its newline is dropped.
    public static func parse(_ journal: String) -> [JournalLine] {
        var lines = journal.split(separator: "\n", omittingEmptySubsequences: false)
        lines.removeLast()  // after the last newline: empty, or a line the kill cut short
        return lines.compactMap { JournalLine(parsing: $0) }
    }

    private static func flatten(_ text: String) -> String {
        text.replacingOccurrences(of: "\t", with: " ").replacingOccurrences(of: "\n", with: " ")
    }
}

extension JournalLine.Operation {
    /// The top level's key space is printed as "-", so that no field is empty.
    static let topLevelField = "-"

    var fields: [String] {
        switch self {
        case let .set(space, key, version, ttl):
            return ["set", Self.field(space), key, "\(version)", "\(ttl)"]
        case let .remove(space, key):
            return ["remove", Self.field(space), key]
        case let .push(queue, item, ttl):
            return ["push", queue, "\(item)", "\(ttl)"]
        case let .pop(queue):
            return ["pop", queue]
        case .save:
            return ["save"]
        case .sweep:
            return ["sweep"]
        }
    }

    init?(fields: [String]) {
        switch (fields.first, fields.count) {
        case ("set", 5):
            guard let version = UInt64(fields[3]), let ttl = Int64(fields[4]) else { return nil }
            self = .set(space: Self.space(fields[1]), key: fields[2], version: version, ttl: ttl)
        case ("remove", 3):
            self = .remove(space: Self.space(fields[1]), key: fields[2])
        case ("push", 4):
            guard let item = UInt64(fields[2]), let ttl = Int64(fields[3]) else { return nil }
            self = .push(queue: fields[1], item: item, ttl: ttl)
        case ("pop", 2):
            self = .pop(queue: fields[1])
        case ("save", 1):
            self = .save
        case ("sweep", 1):
            self = .sweep
        default:
            return nil
        }
    }

    private static func field(_ space: String) -> String { space.isEmpty ? topLevelField : space }
    private static func space(_ field: String) -> String { field == topLevelField ? "" : field }
}
