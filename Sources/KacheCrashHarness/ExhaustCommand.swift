import Foundation
import Kache
#if canImport(Glibc)
import Glibc
#endif

/// `exhaust DIR PREFIX COUNT`: opens the cache directory (`sync`), takes every
/// free file descriptor until `open` fails, reads the keys PREFIX0 …
/// PREFIX(COUNT-1) (whose values are only in their files), gives the
/// descriptors back and reads them again. Prints one line:
///
///     exhausted-by EMFILE hits-while 0 hits-after 20 quarantined 0 read-errors 20
///
/// The descriptor limit is lowered first, so that running out takes a few
/// hundred opens rather than a million.
struct ExhaustCommand {
    let directory: URL
    let prefix: String
    let count: Int

    init(arguments: [String]) throws(UsageError) {
        guard arguments.count == 3, let count = Int(arguments[2]), count > 0 else { throw UsageError("exhaust DIR PREFIX COUNT") }
        directory = URL(fileURLWithPath: arguments[0])
        prefix = arguments[1]
        self.count = count
    }

    func run() -> Int32 {
        var limit = rlimit(rlim_cur: 256, rlim_max: 256)
        guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else {
            printLine("error setrlimit: errno \(errno)")
            return 1
        }
        let cache: Kache
        do {
            cache = try Kache(directory: directory, configuration: Kache.Configuration(durability: .sync))
        } catch {
            printLine("error \(error)")
            return 1
        }
        var held: [Int32] = []
        var exhaustedBy = "none"
        for _ in 0 ..< 4096 {
            let fd = open("/dev/null", O_RDONLY | O_CLOEXEC)
            if fd < 0 {
                exhaustedBy = errno == EMFILE ? "EMFILE" : "errno-\(errno)"
                break
            }
            held.append(fd)
        }
        let keys = (0 ..< count).map { "\(prefix)\($0)" }
        let hitsWhile = keys.filter { cache.data(forKey: $0) != nil }.count
        held.forEach { close($0) }
        let hitsAfter = keys.filter { cache.data(forKey: $0) != nil }.count
        let statistics = cache.statistics
        try? cache.close()
        printLine("exhausted-by \(exhaustedBy) hits-while \(hitsWhile) hits-after \(hitsAfter) quarantined \(statistics.quarantined) read-errors \(statistics.readErrors)")
        return 0
    }
}
