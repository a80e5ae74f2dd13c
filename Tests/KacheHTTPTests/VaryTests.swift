import Foundation
import Kache
import Testing
@testable import KacheHTTP
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// `Vary`: the varying request fields are part of the key.
@Suite struct VaryTests {
    @Test(arguments: Transport.allCases) func eachValueOfAVaryingFieldGetsItsOwnResponse(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
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

    @Test(arguments: Transport.allCases) func repeatedRequestFieldsAreCombinedBeforeComparing(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
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

    // MARK: - Selecting by Content-Language

    /// The conformance suite's `vary-normalise-lang-select`: `en, de` got the
    /// German response; `fr;q=0.5, de;q=1.0` selects German, so it is served.
    @Test(arguments: Transport.allCases) func aRequestSelectingTheStoredLanguageIsServedFromTheCache(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        let path = "/r/lang?cc=max-age%3D5000&vary=Accept-Language&header=Content-Language:de"
        #expect(try await f.get(path, fields: ["Accept-Language": "en, de"]).source == .network)
        let selected = try await f.get(path, fields: ["Accept-Language": "fr;q=0.5, de;q=1.0"])
        #expect(selected.source == .cache)
        #expect(HTTPFixture.text(selected).contains("count=1"))
        #expect(selected.response.value(forHTTPHeaderField: "Content-Language") == "de")
        // The tag compares without case; the exact variant still comes first.
        #expect(try await f.get(path, fields: ["Accept-Language": "DE, fr;q=0.5"]).source == .cache)
        #expect(try await f.get(path, fields: ["Accept-Language": "de, en"]).source == .cache)
        #expect(try await f.server.requestCount("/r/lang") == 1)
    }

    /// Only the request's one top choice selects: another language first, a
    /// tie, `*` first, or a subtag that differs go to the server.
    @Test func aRequestWhoseTopChoiceIsNotTheStoredLanguageGoesToTheNetwork() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/lang-other?cc=max-age%3D5000&vary=Accept-Language&header=Content-Language:de"
        _ = try await f.get(path, fields: ["Accept-Language": "en, de"])
        for value in ["fr, de;q=0.5", "de, fr", "*, de;q=0.5", "de-AT, de;q=0.9", "fr;q=0.5, de;q=1.0, en"] {
            #expect(try await f.get(path, fields: ["Accept-Language": value]).source == .network, "\(value)")
        }
        #expect(try await f.server.requestCount("/r/lang-other") == 6)
    }

    /// A language the request gives q=0 is refused, never selected.
    @Test func aLanguageTheRequestRefusesIsNeverSelected() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/lang-refused?cc=max-age%3D5000&vary=Accept-Language&header=Content-Language:de"
        _ = try await f.get(path, fields: ["Accept-Language": "en, de"])
        #expect(try await f.get(path, fields: ["Accept-Language": "de;q=0"]).source == .network)
        #expect(try await f.get(path, fields: ["Accept-Language": "de;q=0, fr;q=0.1"]).source == .network)
        #expect(try await f.server.requestCount("/r/lang-refused") == 3)
    }

    /// Without `Content-Language`, or with several languages, the response
    /// says no one language it is in: only the exact request values find it.
    @Test func aResponseWithoutOneContentLanguageIsNotSelectedByLanguage() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        for (path, counted) in [
            ("/r/lang-none?cc=max-age%3D5000&vary=Accept-Language", "/r/lang-none"),
            ("/r/lang-two?cc=max-age%3D5000&vary=Accept-Language&header=Content-Language:de,%20en", "/r/lang-two"),
        ] {
            _ = try await f.get(path, fields: ["Accept-Language": "en, de"])
            #expect(try await f.get(path, fields: ["Accept-Language": "fr;q=0.5, de"]).source == .network)
            #expect(try await f.get(path, fields: ["Accept-Language": "fr;q=0.5, en"]).source == .network)
            #expect(try await f.server.requestCount(counted) == 3)
        }
    }

    /// The other fields `Vary` names are still compared exactly.
    @Test func selectingByLanguageStillComparesTheOtherVaryingFields() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/lang-accept?cc=max-age%3D5000&vary=Accept,%20Accept-Language&header=Content-Language:de"
        _ = try await f.get(path, fields: ["Accept-Language": "en, de", "Accept": "text/html"])
        #expect(try await f.get(path, fields: ["Accept-Language": "fr;q=0.5, de", "Accept": "application/json"]).source == .network)
        #expect(try await f.get(path, fields: ["Accept-Language": "fr;q=0.5, de"]).source == .network)
        #expect(try await f.get(path, fields: ["Accept-Language": "fr;q=0.5, de", "Accept": "text/html"]).source == .cache)
        #expect(try await f.server.requestCount("/r/lang-accept") == 3)
    }

    /// An unsafe method's invalidation drops the index, and the alias with it.
    @Test func invalidationMakesTheLanguageAliasUnreachable() async throws {
        let f = try HTTPFixture()
        defer { f.stop() }
        let path = "/r/lang-invalidated?cc=max-age%3D5000&vary=Accept-Language&header=Content-Language:de"
        _ = try await f.get(path, fields: ["Accept-Language": "en, de"])
        var post = URLRequest(url: f.server.url(path))
        post.httpMethod = "POST"
        _ = try await f.client.response(for: post)
        #expect(try await f.get(path, fields: ["Accept-Language": "fr;q=0.5, de"]).source == .network)
        #expect(try await f.server.requestCount("/r/lang-invalidated") == 3)
    }

    /// A `304` to a request that found the variant by its language refreshes
    /// that variant where it lives: the request that stored it finds it fresh.
    @Test(arguments: Transport.allCases) func revalidatingASelectedVariantRefreshesItInPlace(over transport: Transport) async throws {
        let f = try HTTPFixture(transport: transport)
        defer { f.stop() }
        let path = "/r/lang-revalidated?cc=max-age%3D60&etag=auto&vary=Accept-Language&header=Content-Language:de"
        _ = try await f.get(path, fields: ["Accept-Language": "en, de"])
        try await f.advance(by: 61)
        let revalidated = try await f.get(path, fields: ["Accept-Language": "fr;q=0.5, de"])
        #expect(revalidated.source == .revalidated)
        #expect(try await f.server.stats("/r/lang-revalidated").last["if-none-match"] == "\"v1\"")
        #expect(try await f.get(path, fields: ["Accept-Language": "en, de"]).source == .cache)
        #expect(try await f.get(path, fields: ["Accept-Language": "fr;q=0.5, de"]).source == .cache)
        #expect(try await f.server.requestCount("/r/lang-revalidated") == 2)
    }
}
