import Foundation
import Kache
import Testing
@testable import KacheHTTP
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Vary`: the varying request fields are part of the key.
@Suite struct VaryTests {
    @Test func eachValueOfAVaryingFieldGetsItsOwnResponse() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/vary?cc=max-age%3D60&vary=Accept&echo=Accept"
        let json = try await f.get(path, fields: ["Accept": "application/json"])
        let text = try await f.get(path, fields: ["Accept": "text/plain"])
        #expect(json.source == .network)
        #expect(text.source == .network)
        #expect(try await f.server.requestCount("/r/vary") == 2)

        let jsonAgain = try await f.get(path, fields: ["Accept": "application/json"])
        let textAgain = try await f.get(path, fields: ["Accept": "  text/plain "])  // same value, other whitespace
        #expect(jsonAgain.source == .cache)
        #expect(HTTPFixture.text(jsonAgain).contains("accept=application/json"))
        #expect(textAgain.source == .cache)
        #expect(HTTPFixture.text(textAgain).contains("accept=text/plain"))
        #expect(try await f.server.requestCount("/r/vary") == 2)

        // A request without the field is another variant.
        #expect(try await f.get(path).source == .network)
        #expect(try await f.server.requestCount("/r/vary") == 3)
    }

    @Test func fieldsTheVaryDoesNotNameDoNotSplitTheCache() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/vary-lang?cc=max-age%3D60&vary=Accept-Language"
        _ = try await f.get(path, fields: ["Accept-Language": "fr", "X-Trace": "1"])
        #expect(try await f.get(path, fields: ["Accept-Language": "fr", "X-Trace": "2"]).source == .cache)
        #expect(try await f.server.requestCount("/r/vary-lang") == 1)
    }

    @Test func selectingValuesAreComparedAfterNormalisation() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/vary-normal?cc=max-age%3D60&vary=Accept,%20Accept-Language,%20Accept-Encoding"
        _ = try await f.get(path, fields: [
            "Accept": "text/html,application/json", "Accept-Language": "fr;q=0.8, en-GB, de;q=0.8", "Accept-Encoding": "gzip, br",
        ])
        let same = try await f.get(path, fields: [
            "Accept": "  text/html ,  application/json ", "Accept-Language": "FR;q=0.80,EN-gb, de ; Q=0.8 ", "Accept-Encoding": "GZIP;q=1.0 ,br",
        ])
        #expect(same.source == .cache)
        let otherPreference = try await f.get(path, fields: [
            "Accept": "text/html,application/json", "Accept-Language": "fr, en-GB;q=0.8, de;q=0.8", "Accept-Encoding": "gzip, br",
        ])
        #expect(otherPreference.source == .network)
        let otherCodings = try await f.get(path, fields: [
            "Accept": "text/html,application/json", "Accept-Language": "fr;q=0.8, en-GB, de;q=0.8", "Accept-Encoding": "gzip",
        ])
        #expect(otherCodings.source == .network)
        #expect(try await f.server.requestCount("/r/vary-normal") == 3)
    }

    /// Weights written another way, members listed in another order and equal
    /// weights in any order select the same response; a different preference does not.
    @Test func acceptLanguageMatchesByWeightAndEqualWeightsInAnyOrder() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/vary-q?cc=max-age%3D60&vary=Accept-Language&echo=Accept-Language"
        _ = try await f.get(path, fields: ["Accept-Language": "en, de;q=0.5"])
        let reordered = try await f.get(path, fields: ["Accept-Language": "DE;q=0.50, en;q=1"])
        #expect(reordered.source == .cache)
        #expect(HTTPFixture.text(reordered).contains("accept-language=en, de;q=0.5"))
        #expect(try await f.get(path, fields: ["Accept-Language": "de, en;q=0.5"]).source == .network)
        _ = try await f.get(path, fields: ["Accept-Language": "en, de"])
        #expect(try await f.get(path, fields: ["Accept-Language": "de, en"]).source == .cache)
        #expect(try await f.get(path, fields: ["Accept-Language": "en,de"]).source == .cache)
        #expect(try await f.server.requestCount("/r/vary-q") == 3)
    }

    @Test func repeatedRequestFieldsAreCombinedBeforeComparing() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/vary-repeated?cc=max-age%3D60&vary=Accept"
        _ = try await f.get(path, fields: ["Accept": "text/html, application/json"])
        var request = URLRequest(url: f.server.url(path))
        request.addValue("text/html", forHTTPHeaderField: "Accept")
        request.addValue("application/json", forHTTPHeaderField: "Accept")
        #expect(try await f.client.response(for: request).source == .cache)
    }

    @Test func varyStarIsNeverStored() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        _ = try await f.get("/r/vary-star?cc=max-age%3D60&vary=*")
        #expect(try await f.get("/r/vary-star?cc=max-age%3D60&vary=*").source == .network)
        #expect(try await f.server.requestCount("/r/vary-star") == 2)
        #expect(f.client.statistics.stores == 0)
    }
}
