import Foundation
import KacheStorage
import Testing

@Suite struct EntryNameTests {
    /// ASCII keys of every length around the eight-byte steps come back as they are.
    @Test func asciiKeysAreAlreadyCanonical() {
        for length in 0...25 {
            let key = String(repeating: "k", count: length)
            #expect(EntryName.canonical(key) == key)
        }
        let allASCII = String(decoding: (0..<128).map { UInt8($0) }, as: UTF8.self)
        #expect(EntryName.canonical(allASCII).utf8.elementsEqual(allASCII.utf8))
    }

    /// A decomposed "é" anywhere in a key (in an eight-byte word, across two,
    /// or in the tail after the last whole word) is composed, byte for byte
    /// as Foundation's NFC would: a check that missed one byte returns the key as given.
    @Test func aNonASCIICharacterAnywhereIsComposed() {
        for prefix in 0...20 {
            for suffix in [0, 1, 7, 8, 9] {
                let key = String(repeating: "a", count: prefix) + "e\u{301}" + String(repeating: "z", count: suffix)
                let expected = String(repeating: "a", count: prefix) + "\u{E9}" + String(repeating: "z", count: suffix)
                #expect(Array(EntryName.canonical(key).utf8) == Array(expected.utf8), "prefix \(prefix), suffix \(suffix)")
            }
        }
    }
}
