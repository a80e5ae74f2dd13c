import Foundation

/// The parts of one representation that `206 Partial Content` responses
/// brought, kept so that later `Range` requests inside them need no request,
/// and so that parts that join become the complete response (RFC 9111 sections 3.3 and 3.4).
///
/// Invariant: pieces are sorted by offset, lie within the complete length, and
/// neither overlap nor touch (touching pieces are merged into one).
struct RangeParts: Sendable, Equatable {
    /// The length of the complete representation.
    var completeLength: Int
    /// The pieces received, each at its offset.
    private(set) var pieces: [Piece]

    /// Bytes of the representation starting at `offset`.
    struct Piece: Sendable, Equatable {
        var offset: Int
        var bytes: Data

        var range: Range<Int> { offset ..< offset + bytes.count }
    }

    /// Parts holding one piece.
    init(completeLength: Int, offset: Int, bytes: Data) {
        self.completeLength = completeLength
        pieces = []
        insert(offset: offset, bytes: bytes)
    }

    /// Parts from stored pieces, as decoded; nil when they break the invariant.
    init?(completeLength: Int, pieces: [Piece]) {
        var previousEnd = -1
        for piece in pieces {
            guard !piece.bytes.isEmpty, piece.offset > previousEnd, piece.range.upperBound <= completeLength else { return nil }
            previousEnd = piece.range.upperBound
        }
        self.completeLength = completeLength
        self.pieces = pieces
    }

    /// Adds `bytes` at `offset`, merging it with every piece it overlaps or
    /// touches; where they overlap, the new bytes win (they are the newer copy).
    /// - Complexity: O(n + m) for n stored bytes and m new ones.
    mutating func insert(offset: Int, bytes: Data) {
        let new = Piece(offset: offset, bytes: Data(bytes))
        guard !new.bytes.isEmpty, new.range.upperBound <= completeLength else { return }
        var merged = new
        var kept: [Piece] = []
        for piece in pieces {
            guard piece.range.upperBound >= merged.range.lowerBound, piece.range.lowerBound <= merged.range.upperBound else {
                kept.append(piece)
                continue
            }
            let start = min(piece.offset, merged.offset)
            let end = max(piece.range.upperBound, merged.range.upperBound)
            var combined = Data(count: end - start)
            combined.replaceSubrange(piece.offset - start ..< piece.range.upperBound - start, with: piece.bytes)
            combined.replaceSubrange(merged.offset - start ..< merged.range.upperBound - start, with: merged.bytes)
            merged = Piece(offset: start, bytes: combined)
        }
        kept.append(merged)
        pieces = kept.sorted { $0.offset < $1.offset }
    }

    /// The bytes at `range` when one piece holds them all, else nil.
    func bytes(in range: Range<Int>) -> Data? {
        guard let piece = pieces.first(where: { $0.range.lowerBound <= range.lowerBound && range.upperBound <= $0.range.upperBound })
        else { return nil }
        return Data(piece.bytes[(range.lowerBound - piece.offset) ..< (range.upperBound - piece.offset)])
    }

    /// The complete representation, once the pieces have joined into one that covers it.
    var complete: Data? {
        guard pieces.count == 1, pieces[0].offset == 0, pieces[0].bytes.count == completeLength else { return nil }
        return pieces[0].bytes
    }
}
