/// The one byte range of a `Range: bytes=…` request field (RFC 9110 section 14.1.2):
/// `bytes=0-499`, `bytes=500-` or `bytes=-500` (the last 500 bytes).
///
/// A field with several ranges, another unit or bad syntax parses as nil:
/// the cache can't answer it, and sends it on untouched.
enum ByteRange: Equatable, Sendable {
    /// `first-last`, or `first-` when `last` is nil.
    case from(first: Int, last: Int?)
    /// `-length`: the final `length` bytes.
    case suffix(length: Int)

    /// Parses a `Range` field value; nil unless it is exactly one byte range.
    init?(_ field: String) {
        let trimmed = field.trimmingHTTPWhitespace
        guard let equals = trimmed.firstIndex(of: "="),
              trimmed[..<equals].trimmingHTTPWhitespace.lowercased() == "bytes"
        else { return nil }
        let spec = trimmed[trimmed.index(after: equals)...].trimmingHTTPWhitespace
        guard !spec.contains(","), let dash = spec.firstIndex(of: "-") else { return nil }
        let first = String(spec[..<dash])
        let last = String(spec[spec.index(after: dash)...])
        if first.isEmpty {
            guard let length = ByteRange.number(last) else { return nil }
            self = .suffix(length: length)
        } else {
            guard let start = ByteRange.number(first) else { return nil }
            if last.isEmpty {
                self = .from(first: start, last: nil)
            } else {
                guard let end = ByteRange.number(last), end >= start else { return nil }
                self = .from(first: start, last: end)
            }
        }
    }

    /// The offsets it selects in a representation of `length` bytes, or nil
    /// when it selects none (unsatisfiable: the first byte is past the end, or
    /// a suffix of zero bytes).
    func resolved(length: Int) -> Range<Int>? {
        switch self {
        case let .from(first, last):
            guard first < length else { return nil }
            return first ..< min(last.map { $0 + 1 } ?? length, length)
        case let .suffix(count):
            guard count > 0, length > 0 else { return nil }
            return max(0, length - count) ..< length
        }
    }

    /// ASCII digits only, at most 18 of them (no overflow).
    private static func number(_ text: String) -> Int? {
        guard !text.isEmpty, text.utf8.count <= 18, text.utf8.allSatisfy({ (0x30 ... 0x39).contains($0) }) else { return nil }
        return Int(text)
    }
}
