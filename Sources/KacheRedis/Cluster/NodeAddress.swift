/// Where a Redis node listens.
public struct NodeAddress: Hashable, Sendable, CustomStringConvertible {
    /// The host name or IP address.
    public var host: String
    /// The TCP port.
    public var port: Int

    /// Creates an address.
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }

    /// Parses `host:port` (the form `MOVED` and `ASK` replies use); the host
    /// may be an IPv6 address, whose colons come before the last one.
    public init?(_ text: some StringProtocol) {
        guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]),
              (1...65_535).contains(port) else { return nil }
        host = String(text[..<colon])
        self.port = port
    }

    /// `host:port`.
    public var description: String { "\(host):\(port)" }
}
