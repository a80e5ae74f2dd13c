import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The header fields of a stored response, in the order received, with the
/// names as the server spelled them and lookups that ignore case.
struct HeaderFields: Sendable, Equatable {
    /// Name and value pairs; one pair per name.
    private(set) var fields: [(name: String, value: String)]

    /// Fields that describe one connection, never a stored response
    /// (RFC 9110 section 7.6.1), so they are neither stored nor merged from a `304`.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-connection", "te", "trailer", "transfer-encoding", "upgrade",
        "proxy-authenticate", "proxy-authorization",
    ]

    init(_ fields: [(name: String, value: String)] = []) {
        self.fields = []
        for field in fields { self[field.name] = field.value }
    }

    /// The fields of `response` that describe the representation, sorted by
    /// name (Foundation hands them over as an unordered dictionary): neither
    /// the hop-by-hop ones (`Transfer-Encoding` among them) nor those the
    /// `Connection` field names (RFC 9110 section 7.6.1). `Content-Encoding`
    /// is kept as received.
    init(_ response: HTTPURLResponse) {
        let pairs = response.allHeaderFields.compactMap { key, value -> (name: String, value: String)? in
            guard let name = key as? String else { return nil }
            return (name, "\(value)")
        }
        let connection = pairs.first { $0.name.lowercased() == "connection" }?.value ?? ""
        let connectionOptions = Set(connection.split(separator: ",").map { $0.trimmingHTTPWhitespace.lowercased() })
        self.init(pairs
            .filter { !HeaderFields.hopByHop.contains($0.name.lowercased()) && !connectionOptions.contains($0.name.lowercased()) }
            .sorted { $0.name.lowercased() < $1.name.lowercased() })
    }

    /// The value of the field named `name` (any case), or nil.
    subscript(name: String) -> String? {
        get { fields.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value }
        set {
            let index = fields.firstIndex { $0.name.caseInsensitiveCompare(name) == .orderedSame }
            switch (index, newValue) {
            case let (index?, value?): fields[index].value = value
            case let (index?, nil): fields.remove(at: index)
            case let (nil, value?): fields.append((name, value))
            case (nil, nil): break
            }
        }
    }

    /// These fields updated by those of a `304 Not Modified` (RFC 9111 section 3.2):
    /// each field of the `304` replaces the stored one, except `Content-Length`
    /// (the `304` has no body) and the hop-by-hop fields.
    func updated(by notModified: HeaderFields) -> HeaderFields {
        var result = self
        for field in notModified.fields {
            let name = field.name.lowercased()
            guard name != "content-length", !HeaderFields.hopByHop.contains(name) else { continue }
            result[field.name] = field.value
        }
        return result
    }

    /// A list field's value with `member` appended after the members of `list`
    /// (a comma joins them, as it joins two lines of one list field).
    static func appending(_ member: String, to list: String?) -> String {
        guard let list = list?.trimmingHTTPWhitespace, !list.isEmpty else { return member }
        return list + ", " + member
    }

    /// The fields as Foundation takes them.
    var dictionary: [String: String] {
        Dictionary(fields.map { ($0.name, $0.value) }, uniquingKeysWith: { first, _ in first })
    }

    static func == (lhs: HeaderFields, rhs: HeaderFields) -> Bool {
        lhs.fields.elementsEqual(rhs.fields) { $0.name == $1.name && $0.value == $1.value }
    }
}

extension StringProtocol {
    /// Whether the string is an HTTP token (RFC 9110 section 5.6.2): one or more
    /// ASCII letters, digits or the symbols `!#$%&'*+-.^_|~` and the backtick.
    var isHTTPToken: Bool {
        !isEmpty && unicodeScalars.allSatisfy { scalar in
            scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar))
        }
    }
}
