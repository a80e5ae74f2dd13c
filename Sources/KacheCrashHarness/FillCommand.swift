import Foundation
import Kache
#if canImport(Glibc)
import Glibc
#endif

/// `fill DIR LIMIT`: writes into the cache directory with no file allowed to
/// grow past LIMIT bytes (`RLIMIT_FSIZE`, with `SIGXFSZ` ignored so that a
/// write past it fails with `EFBIG` instead of killing the process), the way a
/// nearly full disk refuses a write.
///
/// In `sync` durability it stores eight small values `small-0`…`small-7`,
/// then values under `big-N` that double in size until one is refused, then
/// tries to overwrite `small-0` with a value over the limit. It prints one
/// line per step:
///
/// ```
/// stored small-0 1024
/// refused big-3 16384 diskFull
/// read small-0 intact
/// ```
///
/// and exits 0 after closing the cache, whatever the library answered (the
/// test judges the lines and the directory).
struct FillCommand {
    let directory: URL
    let limit: Int

    init(arguments: [String]) throws(UsageError) {
        guard arguments.count == 2, let limit = Int(arguments[1]), limit > 4096 else { throw UsageError("fill DIR LIMIT (bytes, > 4096)") }
        directory = URL(fileURLWithPath: arguments[0])
        self.limit = limit
    }

    func run() -> Int32 {
        signal(SIGXFSZ, SIG_IGN)
        var fileSize = rlimit(rlim_cur: rlim_t(limit), rlim_max: rlim_t(limit))
        guard setrlimit(__rlimit_resource_t(RLIMIT_FSIZE.rawValue), &fileSize) == 0 else {
            printLine("error setrlimit \(errno)")
            return 1
        }
        let cache: Kache
        do {
            cache = try Kache(directory: directory, configuration: Kache.Configuration(durability: .sync, compressionThreshold: .max))
        } catch {
            printLine("error open \(error)")
            return 1
        }
        var values: [String: Data] = [:]
        for index in 0 ..< 8 {
            store(cache, key: "small-\(index)", size: 1024, into: &values)
        }
        var size = 2048
        for index in 0... {
            guard store(cache, key: "big-\(index)", size: size, into: &values) else { break }
            size *= 2
        }
        store(cache, key: "small-0", size: limit * 2, into: &values)
        for (key, value) in values.sorted(by: { $0.key < $1.key }) {
            printLine("read \(key) \(cache.data(forKey: key) == value ? "intact" : "lost")")
        }
        do {
            try cache.close()
            printLine("closed")
        } catch {
            printLine("error close \(FillCommand.name(of: error))")
        }
        return 0
    }

    /// Sets `key` to `size` bytes LZ4 can't shrink; prints and returns whether it was stored.
    @discardableResult
    private func store(_ cache: Kache, key: String, size: Int, into values: inout [String: Data]) -> Bool {
        let value = CrashValues.fillValue(size: size)
        do {
            try cache.set(value, forKey: key, ttl: .seconds(3600))
            values[key] = value
            printLine("stored \(key) \(size)")
            return true
        } catch {
            printLine("refused \(key) \(size) \(FillCommand.name(of: error))")
            return false
        }
    }

    /// The error's case name (`diskFull`, `io`, …), or its description when it is not a `KacheError`.
    static func name(of error: any Error) -> String {
        guard let error = error as? KacheError else { return "untyped:\(error)" }
        // A case with associated values reflects as one child labelled with the case's name.
        return Mirror(reflecting: error).children.first?.label ?? "\(error)"
    }
}
