import KacheStorage
import Testing

@Suite struct LZ4DictionaryTests {
    let dictionary = LZ4Dictionary(Array(String(repeating: "{\"user\":\"name\",\"tags\":[\"swift\",\"cache\"]}", count: 20).utf8))
    let record = Array("{\"user\":\"name-42\",\"tags\":[\"swift\",\"cache\",\"lz4\"]}".utf8)

    func compressed(_ input: [UInt8]) throws -> [UInt8] {
        var output = [UInt8](repeating: 0, count: input.count)
        let length = try #require(input.withUnsafeBytes { source in output.withUnsafeMutableBytes { dictionary.compress(source, into: $0) } })
        return Array(output[..<length])
    }

    @Test func aRecordShrinksAgainstTheDictionaryAndDecodesWithIt() throws {
        let bytes = try compressed(record)
        #expect(bytes.count < record.count / 2)
        var decoded = [UInt8](repeating: 0, count: record.count)
        let ok = bytes.withUnsafeBytes { source in decoded.withUnsafeMutableBytes { LZ4.decompress(source, into: $0, dictionary: dictionary.contents) } }
        #expect(ok && decoded == record)
    }

    /// Without its dictionary, or with another, the bytes never decode to the
    /// record: a reader given the wrong one fails or gets other bytes, which
    /// the record's checksum then catches.
    @Test func anotherDictionaryDoesNotDecodeTheRecord() throws {
        let bytes = try compressed(record)
        let other = LZ4Dictionary(Array(String(repeating: "x", count: 800).utf8))
        for candidate in [other.contents, UnsafeRawBufferPointer(start: nil, count: 0)] {
            var decoded = [UInt8](repeating: 0, count: record.count)
            let ok = bytes.withUnsafeBytes { source in decoded.withUnsafeMutableBytes { LZ4.decompress(source, into: $0, dictionary: candidate) } }
            #expect(!ok || decoded != record)
        }
    }

    /// Each record is compressed from the loaded state, not after the one before.
    @Test func compressingTwiceGivesTheSameBytes() throws {
        #expect(try compressed(record) == compressed(record))
    }
}
