import KacheStorage

/// A Lua script run by `EVALSHA`, its SHA1 learned from `SCRIPT LOAD` on
/// first use, falling back to `EVAL` on a node that has not seen it yet
/// (`NOSCRIPT`: a new node, a restarted one, a promoted replica).
final class RedisScript: Sendable {
    let source: String
    private let sha = Locked<String?>(nil)

    init(_ source: String) {
        self.source = source
    }

    /// Runs the script with `keys` (which must share a slot) and `arguments`.
    func run(_ client: RedisClusterClient, keys: [RESPArgument], arguments: [RESPArgument], policy: RetryPolicy) async throws(RedisClientError) -> RESPValue {
        let tail = [RESPArgument(Int64(keys.count))] + keys + arguments
        if let sha = sha.withLock({ $0 }) {
            do {
                return try await client.send(RedisCommand(["EVALSHA", RESPArgument(sha)] + tail, keyIndex: keys.isEmpty ? nil : 3, isIdempotent: false), policy: policy)
            } catch let error {
                guard case let .server(message) = error, message.hasPrefix("NOSCRIPT") else { throw error }
            }
        } else if let loaded = try? await client.send(RedisCommand(["SCRIPT", "LOAD", RESPArgument(source)], keyIndex: nil), policy: policy).string {
            self.sha.withLock { $0 = loaded }
        }
        return try await client.send(RedisCommand(["EVAL", RESPArgument(source)] + tail, keyIndex: keys.isEmpty ? nil : 3, isIdempotent: false), policy: policy)
    }
}
