import Foundation
import Testing
@testable import KacheHTTP
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// Concurrent misses of one request share one request to the server (issue 34).
@Suite struct CoalescingTests {
    /// Five concurrent gets of a URL nothing is stored for, answered in half
    /// a second: one request reaches the server, and every caller gets its body.
    @Test func concurrentMissesOfOneRequestSendOne() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        // The server's first request to the path is quick; later ones wait.
        _ = try await f.get("/r/shared?warm=1&cc=max-age%3D60&delay_after_first=0.5")
        let path = "/r/shared?cc=max-age%3D60&delay_after_first=0.5"
        let answers = try await withThrowingTaskGroup(of: CachingClient.Response.self) { group in
            for _ in 0 ..< 5 { group.addTask { try await f.get(path) } }
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(try await f.server.requestCount("/r/shared") == 2)
        #expect(Set(answers.map(\.data)).count == 1 && answers.allSatisfy { !$0.data.isEmpty })
        #expect(answers.allSatisfy { $0.response.statusCode == 200 })
        #expect(f.client.statistics.coalesced == 4 && f.client.statistics.misses == 2)
        #expect(try await f.get(path).source == .cache)
    }

    /// Requests that differ in a field (one the response may vary on) are not merged.
    @Test func requestsThatDifferInAFieldSendTheirOwn() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        _ = try await f.get("/r/apart?warm=1&delay_after_first=0.5")
        let path = "/r/apart?cc=max-age%3D60&vary=Accept-Language&echo=Accept-Language&delay_after_first=0.5"
        let answers = try await withThrowingTaskGroup(of: (String, CachingClient.Response).self) { group in
            for language in ["en", "fr"] {
                group.addTask { (language, try await f.get(path, fields: ["Accept-Language": language])) }
            }
            return try await group.reduce(into: [:]) { $0[$1.0] = $1.1 }
        }
        #expect(try await f.server.requestCount("/r/apart") == 3)
        #expect(answers["en"]?.data != answers["fr"]?.data)
        #expect(f.client.statistics.coalesced == 0)
    }

    /// A caller cancelled while the shared request is out does not cancel it
    /// for the others: they get the response, and it is stored.
    @Test func aCancelledCallerDoesNotCancelTheOthers() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        _ = try await f.get("/r/kept?warm=1&delay_after_first=0.5")
        let path = "/r/kept?cc=max-age%3D60&delay_after_first=0.5"
        let first = Task { try await f.get(path) }
        try await Task.sleep(for: .milliseconds(100))
        let second = Task { try await f.get(path) }
        try await Task.sleep(for: .milliseconds(100))
        first.cancel()
        let answer = try await second.value
        #expect(answer.response.statusCode == 200 && !answer.data.isEmpty)
        _ = try? await first.value
        #expect(try await f.server.requestCount("/r/kept") == 2)
        #expect(try await f.get(path).source == .cache)
    }
}
