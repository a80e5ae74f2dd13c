// kache-redis-peer: a second process with a tiered cache of its own, driven
// line by line on stdin, so KacheRedisTests can measure invalidation between
// two processes. Commands (one a line), each answered with one line:
//   set KEY VALUE   → "ok <wall-clock ns just before the write>"
//   remove KEY      → "ok <wall-clock ns just before the removal>"
//   get KEY         → "value VALUE" or "nil"
//   quit            → exits
// The cluster comes from $KACHE_REDIS_SEEDS (host:port,host:port,…).
import Foundation
import Kache
import KacheRedis

/// Writes one answer line at once (stdout is a pipe: unflushed, the test would wait).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

let seeds = (ProcessInfo.processInfo.environment["KACHE_REDIS_SEEDS"] ?? "").split(separator: ",").map(String.init)
let cache = try await TieredCache(local: Kache(inMemory: Kache.Configuration()), seeds: seeds)
let clock = SystemClock()
say("ready")
while let line = readLine() {
    let parts = line.split(separator: " ", maxSplits: 2).map(String.init)
    switch (parts.first, parts.count) {
    case ("set", 3):
        let started = clock.nanosecondsSince1970()
        do {
            try await cache.set(Data(parts[2].utf8), forKey: parts[1], ttl: .seconds(600))
            say("ok \(started)")
        } catch {
            say("error \(error)")
        }
    case ("remove", 2):
        let started = clock.nanosecondsSince1970()
        do {
            try await cache.removeValue(forKey: parts[1])
            say("ok \(started)")
        } catch {
            say("error \(error)")
        }
    case ("get", 2):
        if let value = await cache.data(forKey: parts[1]) { say("value \(String(decoding: value, as: UTF8.self))") } else { say("nil") }
    case ("quit", _):
        await cache.close()
        exit(0)
    default:
        say("error unknown command")
    }
}
await cache.close()
