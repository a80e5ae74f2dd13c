import Testing
@testable import KacheRedis

/// The error `body` throws, or nil when it returns. Any error but a
/// ``RedisClientError`` is recorded as an issue.
func clientError(_ body: () async throws -> Void) async -> RedisClientError? {
    do {
        try await body()
        return nil
    } catch let error as RedisClientError {
        return error
    } catch {
        Issue.record("expected a RedisClientError, got \(error)")
        return nil
    }
}

extension RedisClientError {
    var isAuthenticationFailed: Bool { if case .authenticationFailed = self { true } else { false } }
    var isAuthenticationRequired: Bool { if case .authenticationRequired = self { true } else { false } }
    var isCertificateNotTrusted: Bool { if case .certificateNotTrusted = self { true } else { false } }

    /// The user an `authenticationFailed` names.
    var refusedUsername: String? { if case let .authenticationFailed(_, username) = self { username } else { nil } }
    /// The name a `serverNameMismatch` expected.
    var expectedServerName: String? { if case let .serverNameMismatch(_, expected) = self { expected } else { nil } }
}
