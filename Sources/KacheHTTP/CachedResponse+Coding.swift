import Foundation

/// What one cache entry of a ``CachingClient`` holds: a response, the
/// index of a URL whose responses vary with request fields, or a
/// ``LanguageAlias`` that leads to one of its variants.
///
/// Layout, one entry per record:
///
/// ```
/// "KHTP"           4 bytes, magic
/// version          1 byte (1)
/// kind             1 byte: 1 response, 2 vary index, 3 language alias
/// metadata length  4 bytes, big-endian
/// metadata         JSON: key, URL, status, header fields, times, and for a record of
///                  `206` parts their complete length and (offset, length) pairs (or the vary index, or the alias);
///                  times are seconds since 2001-01-01 (`Date`'s own representation, so they round-trip exactly)
/// body             the rest: the raw response body (never base64), or the parts' bytes one after the other
/// ```
enum StoredEntry: Sendable, Equatable {
    case response(CachedResponse)
    case varyIndex(VaryIndex)
    case languageAlias(LanguageAlias)

    /// Why bytes do not decode as an entry; a cache lookup treats any of them as a miss.
    enum Damage: Error {
        case notAnEntry
        case unknownVersion(UInt8)
        case truncated
        case badMetadata(String)
    }

    private static let magic = Array("KHTP".utf8)
    private static let version: UInt8 = 1
    private static let prefixLength = 10

    /// The entry's bytes.
    func encoded() throws -> Data {
        let kind: UInt8
        let metadata: Data
        var body = Data()
        switch self {
        case let .response(response):
            kind = 1
            metadata = try JSONEncoder().encode(ResponseMetadata(response))
            body = response.parts.map { $0.pieces.reduce(into: Data()) { $0.append($1.bytes) } } ?? response.body
        case let .varyIndex(index):
            kind = 2
            metadata = try JSONEncoder().encode(index)
        case let .languageAlias(alias):
            kind = 3
            metadata = try JSONEncoder().encode(alias)
        }
        var bytes = Data(capacity: StoredEntry.prefixLength + metadata.count + body.count)
        bytes.append(contentsOf: StoredEntry.magic)
        bytes.append(StoredEntry.version)
        bytes.append(kind)
        withUnsafeBytes(of: UInt32(metadata.count).bigEndian) { bytes.append(contentsOf: $0) }
        bytes.append(metadata)
        bytes.append(body)
        return bytes
    }

    /// Decodes the bytes of an entry.
    init(decoding bytes: Data) throws(Damage) {
        let bytes = Data(bytes) // indices from 0, whatever slice was passed
        guard bytes.count >= StoredEntry.prefixLength, Array(bytes.prefix(4)) == StoredEntry.magic else { throw .notAnEntry }
        guard bytes[4] == StoredEntry.version else { throw .unknownVersion(bytes[4]) }
        let length = bytes[6 ..< 10].reduce(0) { $0 << 8 | Int($1) }
        guard bytes.count >= StoredEntry.prefixLength + length else { throw .truncated }
        let metadata = bytes[StoredEntry.prefixLength ..< StoredEntry.prefixLength + length]
        let body = bytes[(StoredEntry.prefixLength + length)...]
        do {
            switch bytes[5] {
            case 1:
                self = .response(try JSONDecoder().decode(ResponseMetadata.self, from: metadata).response(body: Data(body)))
            case 2:
                guard body.isEmpty else { throw Damage.badMetadata("a vary index has no body") }
                self = .varyIndex(try JSONDecoder().decode(VaryIndex.self, from: metadata))
            case 3:
                guard body.isEmpty else { throw Damage.badMetadata("a language alias has no body") }
                self = .languageAlias(try JSONDecoder().decode(LanguageAlias.self, from: metadata))
            default:
                throw Damage.notAnEntry
            }
        } catch let error as Damage {
            throw error
        } catch {
            throw .badMetadata("\(error)")
        }
    }
}

/// The JSON part of a stored response.
private struct ResponseMetadata: Codable {
    var key: String
    var url: String
    var status: Int
    var headers: [[String]]
    var requestTime: Double
    var responseTime: Double
    var initialAge: Double
    var freshUntil: Double
    /// For a record of parts: the complete length, and each piece's offset and
    /// length, in the order their bytes follow each other in the body. Absent otherwise.
    var parts: Parts?

    struct Parts: Codable {
        var completeLength: Int
        var pieces: [[Int]]
    }

    init(_ response: CachedResponse) {
        key = response.key
        url = response.url.absoluteString
        status = response.status
        headers = response.headers.fields.map { [$0.name, $0.value] }
        requestTime = response.requestTime.timeIntervalSinceReferenceDate
        responseTime = response.responseTime.timeIntervalSinceReferenceDate
        initialAge = response.initialAge
        freshUntil = response.freshUntil.timeIntervalSinceReferenceDate
        parts = response.parts.map { Parts(completeLength: $0.completeLength, pieces: $0.pieces.map { [$0.offset, $0.bytes.count] }) }
    }

    func response(body: Data) throws -> CachedResponse {
        guard let url = URL(string: url) else { throw StoredEntry.Damage.badMetadata("the URL \(url) is malformed") }
        guard headers.allSatisfy({ $0.count == 2 }) else { throw StoredEntry.Damage.badMetadata("a header field is not a name and a value") }
        var body = body
        var rangeParts: RangeParts?
        if let parts {
            var pieces: [RangeParts.Piece] = []
            var position = 0
            for piece in parts.pieces {
                guard piece.count == 2, piece[1] > 0, piece[1] <= body.count - position else {
                    throw StoredEntry.Damage.badMetadata("a part does not fit the body")
                }
                pieces.append(RangeParts.Piece(offset: piece[0], bytes: Data(body[position ..< position + piece[1]])))
                position += piece[1]
            }
            guard position == body.count, let decoded = RangeParts(completeLength: parts.completeLength, pieces: pieces) else {
                throw StoredEntry.Damage.badMetadata("the parts do not match the body")
            }
            rangeParts = decoded
            body = Data()
        }
        return CachedResponse(
            key: key, url: url, status: status, headers: HeaderFields(headers.map { ($0[0], $0[1]) }), body: body,
            requestTime: Date(timeIntervalSinceReferenceDate: requestTime), responseTime: Date(timeIntervalSinceReferenceDate: responseTime),
            initialAge: initialAge, freshUntil: Date(timeIntervalSinceReferenceDate: freshUntil), parts: rangeParts
        )
    }
}
