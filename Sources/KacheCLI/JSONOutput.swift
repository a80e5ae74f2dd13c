import Foundation

/// The JSON that `--json` prints: sorted keys, indented, dates in ISO 8601.
enum JSONOutput {
    static func print(_ value: some Encodable) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        encoder.nonConformingFloatEncodingStrategy = .convertToString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "nan")
        var data = try encoder.encode(value)
        data.append(UInt8(ascii: "\n"))
        try ValueStreams.write(data, to: nil)
    }
}
