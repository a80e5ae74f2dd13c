import Testing
@testable import KacheHTTP

@Suite struct CacheControlTests {
    @Test func directivesAreCaseInsensitiveAndCommaSeparated() {
        let directives = CacheControl("Max-Age=60, NO-CACHE ,must-revalidate,private, public, s-maxage=5, stale-if-error=30")
        #expect(directives.maxAge == 60)
        #expect(directives.noCache)
        #expect(directives.mustRevalidate)
        #expect(directives.isPrivate)
        #expect(directives.isPublic)
        #expect(directives.sharedMaxAge == 5)
        #expect(directives.staleIfError == 30)
        #expect(!directives.noStore)
    }

    @Test func noHeaderMeansNoDirectives() {
        #expect(CacheControl(nil) == CacheControl(""))
        #expect(CacheControl(nil).maxAge == nil)
        #expect(!CacheControl(" , ,").noStore)
    }

    @Test func commasInsideQuotedValuesDoNotSplitDirectives() {
        let directives = CacheControl(#"private="Set-Cookie, X-Token", max-age="7", no-store"#)
        #expect(directives.isPrivate)
        #expect(directives.maxAge == 7)
        #expect(directives.noStore)
        #expect(CacheControl.directives(in: #"x="a\"b,c", y"#).map(\.name) == ["x", "y"])
        #expect(CacheControl.directives(in: #"x="a\"b,c""#).first?.value == #"a"b,c"#)
    }

    @Test func theFirstOfTwoMaxAgesCounts() {
        #expect(CacheControl("max-age=10, max-age=20").maxAge == 10)
    }

    @Test func anInvalidMaxAgeMakesTheResponseStale() {
        #expect(CacheControl("max-age=abc").maxAge == 0)
        #expect(CacheControl("max-age=-5").maxAge == 0)
        #expect(CacheControl("max-age").maxAge == 0)
        #expect(CacheControl("stale-if-error=soon").staleIfError == nil)
    }

    @Test func hugeDeltaSecondsSaturateAtTwoToThe31() {
        #expect(CacheControl("max-age=99999999999999999999999").maxAge == 2_147_483_648)
        #expect(CacheControl("max-age=2147483649").maxAge == 2_147_483_648)
        #expect(CacheControl("max-age=000000000000042").maxAge == 42)
    }

    @Test func qualifiedNoCacheCountsAsNoCache() {
        #expect(CacheControl(#"no-cache="Set-Cookie""#).noCache)
    }

    @Test func qualifiedPrivateKeepsItsFieldNamesAndPlainPrivateHasNone() {
        #expect(CacheControl(#"private="Set-Cookie, X-Token", max-age=7"#).privateFields == ["set-cookie", "x-token"])
        #expect(CacheControl("private, max-age=7").privateFields == nil)
        #expect(CacheControl(#"private="""#).privateFields == nil)
        #expect(CacheControl("Proxy-Revalidate").proxyRevalidate)
        #expect(!CacheControl("must-revalidate").proxyRevalidate)
    }

    // MARK: - Targeted fields (RFC 9213)

    @Test func aTargetedFieldIsReadAsAStructuredDictionary() throws {
        let directives = try #require(CacheControl(targetedField: "max-age=60, s-maxage=30, no-cache, private, stale-if-error=5, foo=bar;x"))
        #expect(directives.isTargeted)
        #expect(directives.maxAge == 60)
        #expect(directives.sharedMaxAge == 30)
        #expect(directives.noCache)
        #expect(directives.isPrivate)
        #expect(directives.privateFields == nil)
        #expect(directives.staleIfError == 5)
        #expect(!directives.noStore)
        #expect(!CacheControl("max-age=60").isTargeted)
    }

    @Test func aTargetedFieldThatIsNoValidDictionaryIsIgnored() {
        for invalid in ["", "max-age=60, &&&", "MaX-aGe=60", "max-age =60", "max-age=60,", "max-age=1.5.5"] {
            #expect(CacheControl(targetedField: invalid) == nil, "\(invalid)")
        }
    }

    @Test func aTargetedDirectiveOfTheWrongTypeIsIgnoredAndTheOthersCount() throws {
        let directives = try #require(CacheControl(targetedField: #"max-age="60", no-store=?0, public, s-maxage=-1, stale-while-revalidate=1.5"#))
        #expect(directives.maxAge == nil)
        #expect(!directives.noStore)
        #expect(directives.isPublic)
        #expect(directives.sharedMaxAge == nil)
        #expect(directives.staleWhileRevalidate == nil)
        #expect(CacheControl(targetedField: "max-age=99999999999")?.maxAge == 2_147_483_648)
        // An RFC 9651 date or display string is no delta-seconds, and must not trap.
        #expect(CacheControl(targetedField: "max-age=@1659578233, public")?.maxAge == nil)
        #expect(CacheControl(targetedField: #"max-age=%"60", public"#)?.maxAge == nil)
        #expect(CacheControl(targetedField: #"private="X-User""#)?.privateFields == ["x-user"])
        #expect(CacheControl(targetedField: #"no-cache="Set-Cookie""#)?.noCache == true)
    }
}
