import Foundation
import Kache
import Testing
@testable import KacheHTTP

/// `Range` requests: answered from a stored complete response or stored parts,
/// and parts that join become the complete response.
@Suite struct RangeTests {
    /// The test server's `fixed=N` body.
    static func fixedBody(_ length: Int) -> Data {
        Data((0 ..< length).map { UInt8(65 + ($0 * 7) % 26) })
    }

    @Test(arguments: [("bytes=10-19", 10 ..< 20), ("bytes=90-", 90 ..< 100), ("bytes=-5", 95 ..< 100), ("bytes=95-500", 95 ..< 100)])
    func aSatisfiableRangeIsServedFromAStoredCompleteResponse(field: String, offsets: Range<Int>) async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/whole?cc=max-age%3D60&fixed=100&ranges=1"
        _ = try await f.get(path)
        let part = try await f.get(path, fields: ["Range": field])
        #expect(part.source == .cache)
        #expect(part.response.statusCode == 206)
        #expect(part.response.value(forHTTPHeaderField: "Content-Range") == "bytes \(offsets.lowerBound)-\(offsets.upperBound - 1)/100")
        #expect(part.response.value(forHTTPHeaderField: "Content-Length") == String(offsets.count))
        #expect(part.data == RangeTests.fixedBody(100)[offsets])
        #expect(try await f.server.requestCount("/r/whole") == 1)
    }

    @Test(arguments: Transport.allCases) func anUnsatisfiableRangeGoesToTheNetworkIntact(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        let path = "/r/short?cc=max-age%3D60&fixed=100&ranges=1"
        _ = try await f.get(path)
        let answer = try await f.get(path, fields: ["Range": "bytes=200-300"])
        #expect(answer.source == .network)
        #expect(answer.response.statusCode == 416)
        let stats = try await f.server.stats("/r/short")
        #expect(stats.count == 2)
        #expect(stats.last["range"] == "bytes=200-300")
        #expect(try await f.get(path).source == .cache)  // the complete response stays
    }

    @Test func aMultipleRangeRequestGoesToTheNetworkIntact() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/multi?cc=max-age%3D60&fixed=100&ranges=1"
        _ = try await f.get(path)
        _ = try await f.get(path, fields: ["Range": "bytes=0-1, 5-6"])
        let stats = try await f.server.stats("/r/multi")
        #expect(stats.count == 2)
        #expect(stats.last["range"] == "bytes=0-1, 5-6")
    }

    @Test(arguments: Transport.allCases) func aStored206AnswersTheRangesItCoversAndOnlyThose(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        let path = "/r/part?cc=max-age%3D60&fixed=100&ranges=1&etag=%22x%22"
        let first = try await f.get(path, fields: ["Range": "bytes=0-49"])
        #expect(first.response.statusCode == 206)
        #expect(first.data == RangeTests.fixedBody(100)[0 ..< 50])

        let inside = try await f.get(path, fields: ["Range": "bytes=10-20"])
        #expect(inside.source == .cache)
        #expect(inside.response.statusCode == 206)
        #expect(inside.response.value(forHTTPHeaderField: "Content-Range") == "bytes 10-20/100")
        #expect(inside.data == RangeTests.fixedBody(100)[10 ..< 21])
        #expect(try await f.server.requestCount("/r/part") == 1)

        let beyond = try await f.get(path, fields: ["Range": "bytes=40-79"])
        #expect(beyond.source == .network)
        #expect(try await f.server.stats("/r/part").last["range"] == "bytes=40-79")
        // A request without Range is never answered from parts.
        _ = try await f.server.bump("/r/nothing")
        #expect(try await f.get(path).source == .network)
    }

    @Test(arguments: [("bytes=0-49", "bytes=50-99"), ("bytes=-50", "bytes=0-49"), ("bytes=0-59", "bytes=40-")])
    func twoStoredRangesThatJoinBecomeTheCompleteResponse(first: String, second: String) async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/join?cc=max-age%3D60&fixed=100&ranges=1&etag=%22x%22"
        #expect(try await f.get(path, fields: ["Range": first]).source == .network)
        #expect(try await f.get(path, fields: ["Range": second]).source == .network)
        let whole = try await f.get(path)
        #expect(whole.source == .cache)
        #expect(whole.response.statusCode == 200)
        #expect(whole.data == RangeTests.fixedBody(100))
        #expect(whole.response.value(forHTTPHeaderField: "Content-Length") == "100")
        #expect(whole.response.value(forHTTPHeaderField: "Content-Range") == nil)
        #expect(try await f.get(path, fields: ["Range": "bytes=30-69"]).data == RangeTests.fixedBody(100)[30 ..< 70])
        #expect(try await f.server.requestCount("/r/join") == 2)
    }

    @Test func rangesWithAGapOrOfAnotherRepresentationDoNotJoin() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let gap = "/r/gap?cc=max-age%3D60&fixed=100&ranges=1&etag=%22x%22"
        _ = try await f.get(gap, fields: ["Range": "bytes=0-29"])
        _ = try await f.get(gap, fields: ["Range": "bytes=60-99"])
        #expect(try await f.get(gap).source == .network)

        // Version 2 has another ETag: its part replaces version 1's instead of joining it.
        let changing = "/r/changing-part?cc=max-age%3D60&fixed=100&ranges=1&etag=auto"
        _ = try await f.get(changing, fields: ["Range": "bytes=0-49"])
        try await f.server.bump("/r/changing-part")
        _ = try await f.get(changing, fields: ["Range": "bytes=50-99"])
        #expect(try await f.get(changing, fields: ["Range": "bytes=0-9"]).source == .network)
        #expect(try await f.get(changing, fields: ["Range": "bytes=60-69"]).source == .cache)
        #expect(try await f.get(changing).source == .network)
    }

    @Test(arguments: Transport.allCases) func aStaleStoredResponseIsRevalidatedAndThenGivesTheRange(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        let path = "/r/stale-range?cc=max-age%3D10&fixed=100&ranges=1&etag=auto"
        _ = try await f.get(path)
        try await f.advance(by: 11)
        let part = try await f.get(path, fields: ["Range": "bytes=-10"])
        #expect(part.source == .revalidated)
        #expect(part.response.statusCode == 206)
        #expect(part.data == RangeTests.fixedBody(100)[90 ..< 100])
        let stats = try await f.server.stats("/r/stale-range")
        #expect(stats.last["if-none-match"] == "\"v1\"")
        #expect(stats.last["range"] == "bytes=-10")
    }
}
