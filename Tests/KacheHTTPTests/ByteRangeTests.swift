import Foundation
import Testing
@testable import KacheHTTP

@Suite struct ByteRangeTests {
    @Test func theThreeFormsParseAndResolve() {
        #expect(ByteRange("bytes=0-499") == .from(first: 0, last: 499))
        #expect(ByteRange("Bytes = 500-") == .from(first: 500, last: nil))
        #expect(ByteRange("bytes=-500") == .suffix(length: 500))
        #expect(ByteRange("bytes=0-499")?.resolved(length: 100) == 0 ..< 100)
        #expect(ByteRange("bytes=10-19")?.resolved(length: 100) == 10 ..< 20)
        #expect(ByteRange("bytes=90-")?.resolved(length: 100) == 90 ..< 100)
        #expect(ByteRange("bytes=-500")?.resolved(length: 100) == 0 ..< 100)
        #expect(ByteRange("bytes=-5")?.resolved(length: 100) == 95 ..< 100)
    }

    @Test func unsatisfiableRangesResolveToNothing() {
        #expect(ByteRange("bytes=100-")?.resolved(length: 100) == nil)
        #expect(ByteRange("bytes=-0")?.resolved(length: 100) == nil)
        #expect(ByteRange("bytes=-5")?.resolved(length: 0) == nil)
    }

    @Test(arguments: ["bytes=0-1,5-6", "items=0-5", "bytes=5-1", "bytes=-", "bytes=a-b", "bytes 0-5", "bytes=0-5-", ""])
    func anythingButOneByteRangeIsNotParsed(field: String) {
        #expect(ByteRange(field) == nil)
    }

    @Test func contentRangeParsesAndFormats() {
        #expect(ContentRange("bytes 10-19/100") == ContentRange(range: 10 ..< 20, completeLength: 100))
        #expect(ContentRange("bytes 0-0/*") == ContentRange(range: 0 ..< 1, completeLength: nil))
        #expect(ContentRange("bytes */100") == nil)
        #expect(ContentRange("bytes 10-5/100") == nil)
        #expect(ContentRange("bytes 10-100/100") == nil)
        #expect(ContentRange(range: 95 ..< 100, completeLength: 100).fieldValue == "bytes 95-99/100")
    }

    @Test func partsMergeWhenTheyOverlapOrTouchAndNewBytesWin() {
        var parts = RangeParts(completeLength: 10, offset: 0, bytes: Data("abc".utf8))
        parts.insert(offset: 6, bytes: Data("ghi".utf8))
        #expect(parts.pieces.count == 2)
        #expect(parts.bytes(in: 1 ..< 3) == Data("bc".utf8))
        #expect(parts.bytes(in: 2 ..< 7) == nil)
        #expect(parts.complete == nil)
        parts.insert(offset: 3, bytes: Data("def".utf8))   // touches both
        #expect(parts.pieces.count == 1)
        #expect(parts.bytes(in: 2 ..< 7) == Data("cdefg".utf8))
        parts.insert(offset: 8, bytes: Data("IJ".utf8))    // overlaps the end
        #expect(parts.complete == Data("abcdefghIJ".utf8))
        parts.insert(offset: 9, bytes: Data("toolong".utf8))  // past the complete length: ignored
        #expect(parts.complete == Data("abcdefghIJ".utf8))
    }

    @Test func storedPartsRoundTripAndBadOnesAreRejected() throws {
        var parts = RangeParts(completeLength: 100, offset: 0, bytes: Data(repeating: 1, count: 10))
        parts.insert(offset: 50, bytes: Data(repeating: 2, count: 5))
        let record = CachedResponse(
            key: "GET http://127.0.0.1/p\nparts", url: URL(string: "http://127.0.0.1/p")!, status: 206, headers: HeaderFields(),
            body: Data(), requestTime: Date(timeIntervalSince1970: 1_800_000_000), responseTime: Date(timeIntervalSince1970: 1_800_000_000),
            initialAge: 0, freshUntil: Date(timeIntervalSince1970: 1_800_000_060), parts: parts
        )
        #expect(try StoredEntry(decoding: StoredEntry.response(record).encoded()) == .response(record))
        #expect(RangeParts(completeLength: 10, pieces: [.init(offset: 0, bytes: Data([1, 2])), .init(offset: 2, bytes: Data([3]))]) == nil)
        #expect(RangeParts(completeLength: 2, pieces: [.init(offset: 1, bytes: Data([1, 2]))]) == nil)
    }
}
