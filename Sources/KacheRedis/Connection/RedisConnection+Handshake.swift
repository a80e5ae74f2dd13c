extension RedisConnection {
    /// The first commands on a new connection: `HELLO 3`, with `AUTH user
    /// password` in it when there are credentials, so that RESP3 and the user
    /// are settled in one round trip. Returns the protocol version.
    ///
    /// A server that refuses `HELLO` for what it is (before Redis 6 it has no
    /// `HELLO`; `NOPROTO` when it does not speak RESP3) stays on RESP2, and the
    /// credentials then go in a plain `AUTH`. A refusal of the credentials is
    /// never taken for that: `WRONGPASS` and `NOAUTH` are thrown as what they are.
    func negotiate(credentials: RedisCredentials?, prefersRESP3: Bool) async throws(RedisClientError) -> Int {
        if prefersRESP3 {
            var hello: [RESPArgument] = ["HELLO", "3"]
            if let credentials {
                hello += ["AUTH", RESPArgument(credentials.effectiveUsername), RESPArgument(credentials.password)]
            }
            switch try await sendRaw(hello) {
            case .map:
                return 3
            case let .error(message):
                if let refusal = Self.refusal(message, credentials: credentials, address: address) { throw refusal }
            default:
                // Accepted, with a reply that is not RESP3's map: authenticated, on RESP2.
                return 2
            }
        }
        if let credentials {
            let auth: [RESPArgument] = credentials.username.map { ["AUTH", RESPArgument($0), RESPArgument(credentials.password)] }
                ?? ["AUTH", RESPArgument(credentials.password)]
            if case let .error(message) = try await sendRaw(auth) {
                // NOAUTH can't answer AUTH itself; any error here is the credentials'.
                throw Self.refusal(message, credentials: credentials, address: address)
                    ?? .authenticationFailed(address, username: credentials.effectiveUsername)
            }
        }
        return 2
    }

    /// The error an error reply to `HELLO` or `AUTH` stands for, when it
    /// refuses the client (rather than the command).
    private static func refusal(_ message: String, credentials: RedisCredentials?, address: NodeAddress) -> RedisClientError? {
        if message.hasPrefix("WRONGPASS") { return .authenticationFailed(address, username: credentials?.effectiveUsername ?? "default") }
        if message.hasPrefix("NOAUTH") { return .authenticationRequired(address) }
        return nil
    }
}
