/// Who a connection authenticates as: an ACL user and its password, or the
/// `default` user's password (`requirepass`) when `username` is nil.
///
/// Every connection the client opens sends them in its `HELLO 3 AUTH …` (or
/// `AUTH` on a server without `HELLO`). The password is never printed: the
/// `description`, the `debugDescription` and the mirror `dump` reads all show
/// `<redacted>` in its place.
///
/// ```swift
/// let credentials = RedisCredentials(username: "cache", password: secret)
/// let configuration = RedisClusterConfiguration(seeds: seeds, credentials: credentials)
/// ```
public struct RedisCredentials: Sendable, Equatable {
    /// The ACL user; nil for `default`, the user `requirepass` sets the password of.
    public var username: String?
    /// The user's password.
    public var password: String

    /// Creates credentials.
    public init(username: String? = nil, password: String) {
        self.username = username
        self.password = password
    }

    /// The user `HELLO … AUTH` names: `username`, or `default`.
    var effectiveUsername: String { username ?? "default" }
}

extension RedisCredentials: CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The user, and `<redacted>` for the password.
    public var description: String {
        "RedisCredentials(username: \(username.map { "\"\($0)\"" } ?? "nil"), password: <redacted>)"
    }

    /// The same as ``description``: the password is redacted.
    public var debugDescription: String { description }

    /// The user, and `<redacted>` for the password, so that `dump` and
    /// `String(describing:)` of a configuration holding these never show it.
    public var customMirror: Mirror {
        Mirror(self, children: ["username": username as Any, "password": "<redacted>"], displayStyle: .struct)
    }
}
