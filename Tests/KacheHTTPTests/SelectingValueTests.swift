import Testing
@testable import KacheHTTP

@Suite struct SelectingValueTests {
    func normal(_ value: String, _ field: String) -> String { SelectingValue.normalized(value, field: field) }

    @Test func whitespaceAroundCommasAndAtTheEndsIsRemoved() {
        #expect(normal("  text/html ,application/json  ,, ", "X-Mode") == "text/html, application/json")
        #expect(normal("  text/html ,application/json  ,, ", "Accept") == "application/json, text/html")
        #expect(normal("a  \t b", "X-Mode") == "a b")
    }

    @Test func acceptLanguageIsOrderedByWeightWithoutCaseOrSpellingOfTheWeight() {
        let normal = normal("fr;q=0.8, EN-GB, de;q=0.8", "Accept-Language")
        #expect(normal == "en-gb, de;q=0.8, fr;q=0.8")
        #expect(self.normal("fr ; Q=0.80,en-gb;q=1.000, DE;q=0.8", "accept-language") == normal)
        #expect(self.normal("da, en-gb;q=0.05", "Accept-Language") == "da, en-gb;q=0.05")
        #expect(self.normal("en;q=0, fr;q=0.", "Accept-Language") == "en;q=0, fr;q=0")
    }

    /// Equal weights are equally acceptable, in any order; a different
    /// preference and a q=0 member are kept.
    @Test func acceptLanguageKeepsEverythingThatMaySelectAnotherLanguage() {
        #expect(normal("en, de", "Accept-Language") == normal("de, en", "Accept-Language"))
        #expect(normal("fr, en-gb;q=0.8", "Accept-Language") != normal("en-gb, fr;q=0.8", "Accept-Language"))
        #expect(normal("fr, *;q=0", "Accept-Language") != normal("fr", "Accept-Language"))
        // A range named twice: which weight counts is up to the server, so nothing moves.
        #expect(normal("en;q=0.5, en", "Accept-Language") == "en;q=0.5, en")
        #expect(normal("en;q=0.5, en", "Accept-Language") != normal("en, en;q=0.5", "Accept-Language"))
    }

    /// A weight outside RFC 9110's grammar makes the meaning unknown: only whitespace is normalised.
    @Test func aMalformedWeightLeavesTheValueAsWritten() {
        #expect(normal("de;q=.8, en", "Accept-Language") == "de;q=.8, en")
        #expect(normal("de;q=0.8, en", "Accept-Language") == "en, de;q=0.8")
        for malformed in ["en;q=abc", "en;q=1.5", "en;q=0.8888", "en;q=1.001", "en;q = 0.5", "en;level=1", "en;q=0.5;x=1"] {
            #expect(normal(malformed, "Accept-Language") == malformed, "\(malformed)")
        }
    }

    @Test func acceptEncodingKeepsWeightsAndExclusions() {
        #expect(normal("GZIP;q=1.0, br;q=0.500", "Accept-Encoding") == "gzip, br;q=0.5")
        #expect(normal("br;q=0.5, gzip", "Accept-Encoding") == normal("gzip, br;q=0.5", "Accept-Encoding"))
        // A server picks br for one and gzip for the other.
        #expect(normal("gzip;q=0.1, br", "Accept-Encoding") != normal("gzip, br;q=0.1", "Accept-Encoding"))
        // identity;q=0 forbids the unencoded form a server might otherwise send.
        #expect(normal("br, gzip, identity;q=0", "Accept-Encoding") != normal("br, gzip", "Accept-Encoding"))
        #expect(normal("gzip", "Accept-Encoding") != normal("gzip, br", "Accept-Encoding"))
    }

    @Test func acceptNormalisesTypeAndParameterNamesButNotParameterValues() {
        #expect(normal("Text/HTML;Level=1 ; q=0.5, application/json", "Accept") == "application/json, text/html;level=1;q=0.5")
        #expect(normal("text/html;charset=UTF-8", "Accept") != normal("text/html;charset=utf-8", "Accept"))
        // A quoted parameter value may hold a comma or spaces: left as written.
        #expect(normal(#"text/html;x="a,b  c", */*"#, "Accept") == #"text/html;x="a,b  c", */*"#)
        #expect(normal(#"text/html;x="a,b""#, "Accept") != normal(#"text/html;x="a, b""#, "Accept"))
        #expect(normal("text/html;q=0.5;level=1", "Accept") == "text/html;q=0.5;level=1")
    }

    @Test func otherFieldsKeepTheirOrderAndCase() {
        #expect(normal("B, a", "X-Mode") == "B, a")
        #expect(normal("a;q=0.5, b", "X-Mode") == "a;q=0.5, b")
    }

    /// The language a request selects for certain: its one top range with q>0.
    @Test func theSelectedLanguageIsTheOneTopRangeAboveZero() {
        func selected(_ value: String?) -> String? { SelectingValue.selectedLanguage(acceptLanguage: value) }
        #expect(selected("fr;q=0.5, de;q=1.0") == "de")
        #expect(selected("DE-at, en;q=0.9") == "de-at")
        #expect(selected("en, de") == nil)              // a tie
        #expect(selected("*, de;q=0.5") == nil)         // any language first
        #expect(selected("de;q=0") == nil)
        #expect(selected("de;q=0, fr;q=0") == nil)
        #expect(selected("de;q=0, fr;q=0.1") == "fr")
        #expect(selected("de, de;q=0.5") == nil)        // named twice
        #expect(selected("de;q=.5") == nil)             // malformed
        #expect(selected(nil) == nil)
        #expect(selected("") == nil)
    }

    @Test func aContentLanguageIsOneLanguageTag() {
        #expect(SelectingValue.contentLanguage("de") == "de")
        #expect(SelectingValue.contentLanguage(" DE-AT ") == "de-at")
        #expect(SelectingValue.contentLanguage("de, en") == nil)
        #expect(SelectingValue.contentLanguage("*") == nil)
        #expect(SelectingValue.contentLanguage("de_AT") == nil)
        #expect(SelectingValue.contentLanguage("") == nil)
        #expect(SelectingValue.contentLanguage(nil) == nil)
    }
}
