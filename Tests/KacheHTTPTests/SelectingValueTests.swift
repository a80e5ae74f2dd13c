import Testing
@testable import KacheHTTP

@Suite struct SelectingValueTests {
    @Test func whitespaceAroundCommasAndAtTheEndsIsRemoved() {
        #expect(SelectingValue.normalized("  text/html ,application/json  ,, ", field: "Accept") == "text/html, application/json")
        #expect(SelectingValue.normalized("a  \t b", field: "X-Mode") == "a b")
    }

    @Test func acceptLanguageIsASetOrderedByQualityWithoutCase() {
        let normal = SelectingValue.normalized("fr;q=0.8, EN-GB, de;q=0.8", field: "Accept-Language")
        #expect(normal == "en-gb, de;q=0.8, fr;q=0.8")
        #expect(SelectingValue.normalized("en-gb;q=1, FR;q=0.80,de;q=.8", field: "accept-language") == normal)
        #expect(SelectingValue.normalized("fr, en-gb;q=0.8", field: "Accept-Language") != SelectingValue.normalized("en-gb, fr;q=0.8", field: "Accept-Language"))
        #expect(SelectingValue.normalized("da, en-gb;q=0.05", field: "Accept-Language") == "da, en-gb;q=0.05")
    }

    @Test func acceptEncodingIsTheSetOfAcceptedCodings() {
        #expect(SelectingValue.normalized("br, gzip;q=0.5, identity;q=0, GZIP", field: "Accept-Encoding") == "br, gzip")
        #expect(SelectingValue.normalized("gzip,br", field: "Accept-Encoding") == SelectingValue.normalized(" br , gzip ", field: "Accept-Encoding"))
        #expect(SelectingValue.normalized("gzip", field: "Accept-Encoding") != SelectingValue.normalized("gzip, br", field: "Accept-Encoding"))
    }
}
