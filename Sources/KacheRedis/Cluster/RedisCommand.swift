/// A command for the cluster: its arguments, which of them is the key that
/// routes it, and whether sending it twice is harmless.
///
/// ```swift
/// let get = RedisCommand(["GET", "user:1"], keyIndex: 1)
/// let reply = try await client.send(get)
/// ```
public struct RedisCommand: Sendable {
    /// The command name and its arguments.
    public var arguments: [RESPArgument]
    /// The index in ``arguments`` of the key that picks the node, nil for
    /// commands any node answers.
    public var keyIndex: Int?
    /// Whether the command may be retried when its reply was lost (the
    /// connection dropped or timed out after it was sent). A plain `SET` may;
    /// a push onto a list may not.
    public var isIdempotent: Bool
    /// Whether the command only reads, so that a replica may answer it when
    /// the client's ``RedisClusterConfiguration/readFrom`` prefers replicas.
    public var isReadOnly: Bool

    /// Creates a command.
    public init(_ arguments: [RESPArgument], keyIndex: Int?, isIdempotent: Bool = true, isReadOnly: Bool = false) {
        self.arguments = arguments
        self.keyIndex = keyIndex
        self.isIdempotent = isIdempotent
        self.isReadOnly = isReadOnly
    }

    /// The slot of the routing key, nil without one.
    var slot: HashSlot? {
        guard let keyIndex, keyIndex < arguments.count else { return nil }
        return HashSlot(argument: arguments[keyIndex])
    }

    /// The command name, for messages.
    var name: String {
        guard let first = arguments.first, case let .text(text) = first.storage else { return "command" }
        return text
    }
}
