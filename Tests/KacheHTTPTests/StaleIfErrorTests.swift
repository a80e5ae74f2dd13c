import Foundation
import Kache
import Testing
@testable import KacheHTTP
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `stale-if-error`: a stale response stands in when the server is gone or failing.
@Suite struct StaleIfErrorTests {
    @Test(arguments: Transport.allCases) func aServerThatGoesAwayIsReplacedByTheStaleResponseWithinTheWindow(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        let path = "/r/sie?cc=max-age%3D10,%20stale-if-error%3D60"
        let first = try await f.get(path)
        f.server.stop()

        try await f.advance(by: 40)  // stale for 30 s
        let stale = try await f.get(path)
        #expect(stale.source == .staleOnError)
        #expect(stale.data == first.data)
        #expect(stale.response.statusCode == 200)

        try await f.advance(by: 35)  // stale for 65 s: beyond the window
        // URLSession's URLError, or the other transports' HTTPTransportError.network.
        await #expect { try await f.get(path) } throws: { HTTPTransportError.isNetworkFailure($0) }
        #expect(f.client.statistics.staleOnError == 1)
    }

    @Test(arguments: Transport.allCases) func aServerErrorIsReplacedByTheStaleResponse(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        let path = "/r/failing?cc=max-age%3D10,%20stale-if-error%3D60&fail_after=1"
        let first = try await f.get(path)
        try await f.advance(by: 20)
        let stale = try await f.get(path)
        #expect(stale.source == .staleOnError)
        #expect(stale.data == first.data)
        #expect(try await f.server.requestCount("/r/failing") == 2)  // the second was answered 503
    }

    @Test func withoutStaleIfErrorTheErrorReachesTheCaller() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/no-sie?cc=max-age%3D10&fail_after=1"
        _ = try await f.get(path)
        try await f.advance(by: 20)
        let failed = try await f.get(path)
        #expect(failed.source == .network)
        #expect(failed.response.statusCode == 503)
    }

    @Test(arguments: Transport.allCases) func mustRevalidateForbidsServingStale(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        let path = "/r/strict?cc=max-age%3D10,%20must-revalidate,%20stale-if-error%3D60&fail_after=1"
        _ = try await f.get(path)
        try await f.advance(by: 20)
        #expect(try await f.get(path).response.statusCode == 503)
    }

    @Test func thePolicyCanGrantAWindowTheResponseDoesNotState() async throws {
        let f = try HTTPFixture(policy: CachePolicy(staleIfError: .atLeast(.seconds(120))))
        defer { f.stop() }
        let path = "/r/granted?cc=max-age%3D10"
        _ = try await f.get(path)
        f.server.stop()
        try await f.advance(by: 100)
        #expect(try await f.get(path).source == .staleOnError)
        try await f.advance(by: 40)
        await #expect(throws: URLError.self) { try await f.get(path) }
    }

    @Test func thePolicyCanRefuseStaleResponses() async throws {
        let f = try HTTPFixture(policy: CachePolicy(staleIfError: .never))
        defer { f.stop() }
        let path = "/r/refused?cc=max-age%3D10,%20stale-if-error%3D60"
        _ = try await f.get(path)
        f.server.stop()
        try await f.advance(by: 20)
        await #expect(throws: URLError.self) { try await f.get(path) }
    }
}
