import Foundation
import Testing
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The test server itself: a missing interpreter fails loudly.
@Suite struct TestServerTests {
    @Test func aMissingPythonFailsWithAClearMessage() throws {
        let error = #expect(throws: TestServerError.self) {
            _ = try TestServer(interpreter: "python3-that-is-not-installed")
        }
        #expect(error?.description.contains("was not found on PATH") == true)
    }

    @Test func theServerCountsRequestsPerPath() async throws {
        let server = try TestServer()
        defer { server.stop() }
        let session = URLSession(configuration: .ephemeral)
        _ = try await session.data(from: server.url("/r/one?x=1"))
        _ = try await session.data(from: server.url("/r/one?x=2"))
        #expect(try await server.requestCount("/r/one") == 2)
        #expect(try await server.requestCount("/r/other") == 0)
    }
}
