import Foundation
import NIOCore
import Testing
@testable import KacheRedis

@Suite struct RESPParserTests {
    let parser = RESPParser()

    private func parseAll(_ text: String) throws -> [RESPValue] {
        var buffer = ByteBuffer(string: text)
        var values: [RESPValue] = []
        while let value = try parser.next(from: &buffer) { values.append(value) }
        #expect(buffer.readableBytes == 0)
        return values
    }

    @Test func readsEveryRESP2Type() throws {
        let values = try parseAll("+OK\r\n-ERR bad\r\n:-42\r\n$3\r\nfoo\r\n$-1\r\n*2\r\n:1\r\n$0\r\n\r\n*-1\r\n")
        #expect(values == [
            .simpleString("OK"), .error("ERR bad"), .integer(-42), .bulkString(ByteBuffer(string: "foo")), .null,
            .array([.integer(1), .bulkString(ByteBuffer())]), .null,
        ])
    }

    @Test func readsEveryRESP3Type() throws {
        let values = try parseAll("_\r\n#t\r\n#f\r\n,3.5\r\n,inf\r\n(12345678901234567890\r\n=7\r\ntxt:abc\r\n!5\r\nERR x\r\n%1\r\n+a\r\n:1\r\n~1\r\n:2\r\n>2\r\n+invalidate\r\n*1\r\n$1\r\nk\r\n|1\r\n+ttl\r\n:3\r\n:9\r\n")
        #expect(values == [
            .null, .boolean(true), .boolean(false), .double(3.5), .double(.infinity), .bigNumber("12345678901234567890"),
            .verbatimString("abc"), .error("ERR x"), .map([.simpleString("a")], [.integer(1)]), .set([.integer(2)]),
            .push([.simpleString("invalidate"), .array([.bulkString(ByteBuffer(string: "k"))])]), .integer(9),
        ])
    }

    @Test func encodedValuesReadBackEqual() throws {
        let values: [RESPValue] = [
            .simpleString("PONG"), .error("MOVED 1 127.0.0.1:7000"), .integer(.min), .integer(.max), .bulkString(ByteBuffer(bytes: [0, 13, 10, 255])),
            .null, .array([.array([]), .map([.integer(1)], [.set([.boolean(true)])])]), .push([.double(-0.5)]), .bigNumber("-1"),
        ]
        var buffer = ByteBuffer()
        values.forEach { RESPEncoder.writeValue($0, into: &buffer) }
        var read: [RESPValue] = []
        while let value = try parser.next(from: &buffer) { read.append(value) }
        #expect(read == values)
    }

    @Test func encodesCommandsAsArraysOfBulkStrings() {
        var buffer = ByteBuffer()
        RESPEncoder.writeCommand(["SET", "k", RESPArgument(bytes: [0xFF, 0x00]), RESPArgument(Int64(1234567890123)), RESPArgument(Data([0x0D, 0x0A, 0x00]))], into: &buffer)
        let expected = Array("*5\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\n".utf8) + [0xFF, 0] + Array("\r\n$13\r\n1234567890123\r\n$3\r\n".utf8) + [0x0D, 0x0A, 0, 0x0D, 0x0A]
        #expect(Array(buffer.readableBytesView) == expected)
    }

    /// A command goes after what the buffer holds already; text is counted
    /// in UTF-8 bytes, not characters, and a buffer argument contributes only
    /// its unread bytes.
    @Test func commandsAppendAfterEarlierBytesWithLengthsInUTF8Bytes() {
        var buffer = ByteBuffer(string: "earlier")
        var value = ByteBuffer(string: "skip:kept")
        value.moveReaderIndex(forwardBy: 5)
        RESPEncoder.writeCommand(["SET", "clé-ü", RESPArgument(value), RESPArgument(Data())], into: &buffer)
        let expected = Array("earlier*4\r\n$3\r\nSET\r\n$7\r\nclé-ü\r\n$4\r\nkept\r\n$0\r\n\r\n".utf8)
        #expect(Array(buffer.readableBytesView) == expected)
    }

    /// The counts and lengths are written in decimal: each side of every
    /// change in their number of digits, from 0 to 100,000.
    @Test func commandLengthsOfEveryDigitCountAreWrittenInDecimal() {
        for length in [0, 1, 9, 10, 11, 99, 100, 101, 999, 1000, 1024, 9999, 10_000, 99_999, 100_000] {
            var buffer = ByteBuffer()
            let value = [UInt8](repeating: 0x61, count: length)
            RESPEncoder.writeCommand(Array(repeating: RESPArgument(bytes: value), count: max(length % 13, 1)), into: &buffer)
            var expected = Array("*\(max(length % 13, 1))\r\n".utf8)
            for _ in 0..<max(length % 13, 1) { expected += Array("$\(length)\r\n".utf8) + value + [13, 10] }
            #expect(buffer.readableBytesView.elementsEqual(expected), "length \(length)")
        }
    }

    /// Every prefix of a valid stream is "not yet": nil, nothing consumed.
    @Test func partialInputWaitsForMore() throws {
        let text = "*3\r\n$5\r\nhello\r\n%1\r\n+a\r\n,1.5\r\n>1\r\n:7\r\n"
        let bytes = Array(text.utf8)
        for cut in 0..<bytes.count {
            var buffer = ByteBuffer(bytes: bytes[..<cut])
            #expect(try parser.next(from: &buffer) == nil, "cut at \(cut)")
            #expect(buffer.readableBytes == cut)
        }
    }

    @Test func announcedSizesBeyondTheLimitsAreRefused() {
        for hostile in ["$999999999999\r\n", "*99999999999\r\n", "%99999999999\r\n", "$-2\r\n", "*-5\r\n", ":99999999999999999999\r\n", "$1x\r\n"] {
            var buffer = ByteBuffer(string: hostile)
            #expect(throws: RESPProtocolError.self, "\(hostile)") { try parser.next(from: &buffer) }
        }
        var deep = ByteBuffer(string: String(repeating: "*1\r\n", count: 100) + ":1\r\n")
        #expect(throws: RESPProtocolError.tooDeep(limit: 32)) { try parser.next(from: &deep) }
        var endless = ByteBuffer(string: "+" + String(repeating: "a", count: 70_000))
        #expect(throws: RESPProtocolError.lineTooLong(limit: 64 << 10)) { try parser.next(from: &endless) }
    }

    /// A 16-million-element announcement costs nothing until the elements come.
    @Test func hugeAnnouncedAggregateDoesNotAllocateUpFront() throws {
        var buffer = ByteBuffer(string: "*16777216\r\n:1\r\n")
        #expect(try parser.next(from: &buffer) == nil)
        var bulk = ByteBuffer(string: "$536870912\r\nabc")
        #expect(try parser.next(from: &bulk) == nil)
    }

    /// Random bytes, and valid streams with bytes flipped, cut or repeated:
    /// the parser returns or throws, never traps, and never reads past the buffer.
    @Test func hostileBytesNeverCrashIt() throws {
        var rng = SystemRandomNumberGenerator()
        let alphabet = Array("+-:$*_#,(=!%~>|\r\n0123456789-tfinax".utf8)
        var seeds: [[UInt8]] = []
        var valid = ByteBuffer()
        for value in [RESPValue.array([.bulkString(ByteBuffer(string: "v")), .integer(3), .map([.null], [.double(1)])]), .push([.set([.boolean(false)])])] {
            RESPEncoder.writeValue(value, into: &valid)
        }
        seeds.append(Array(valid.readableBytesView))
        var outcomes = (values: 0, incomplete: 0, errors: 0)
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...64, using: &rng)).map { _ in
                    Bool.random(using: &rng) ? alphabet.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng)
                }
            } else {
                bytes = seeds[0]
                for _ in 0..<Int.random(in: 1...4, using: &rng) {
                    let index = Int.random(in: 0..<bytes.count, using: &rng)
                    switch Int.random(in: 0..<3, using: &rng) {
                    case 0: bytes[index] = alphabet.randomElement(using: &rng)!
                    case 1: bytes.removeSubrange(index...)
                    default: bytes.insert(contentsOf: bytes[index...].prefix(8), at: index)
                    }
                    if bytes.isEmpty { break }
                }
            }
            var buffer = ByteBuffer(bytes: bytes)
            do {
                var count = 0
                while let _ = try parser.next(from: &buffer), count < 100 { count += 1 }
                if count > 0 { outcomes.values += 1 } else { outcomes.incomplete += 1 }
            } catch {
                outcomes.errors += 1
            }
        }
        #expect(outcomes.values > 0 && outcomes.errors > 0 && outcomes.incomplete > 0)
    }
}
