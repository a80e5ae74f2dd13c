import Foundation
import KacheStorage

/// Small records gathered into blocks that are LZ4-compressed together, as a
/// segment of compressed blocks would hold them: what it saves in bytes, and
/// what a cold read of one record then costs (verify the block's checksum,
/// decompress the block up to the record's end, copy the record out).
///
/// A record here is its key and value, back to back; the header a record
/// format adds is left out, the same for every block size. With a
/// dictionary, each block is compressed against it (LZ4's dictionary API), as
/// a segment could hold one for all its blocks, kept in memory by readers.
struct RecordBlocks {
    /// Where each record is: its block, and its range in the block's raw bytes.
    struct Place {
        var block: Int
        var range: Range<Int>
    }

    /// Each block's bytes as compressed (raw when LZ4 could not shrink it).
    private(set) var compressed: [[UInt8]] = []
    /// Each block's raw length, and whether it is stored compressed.
    private(set) var rawLengths: [Int] = []
    private(set) var isCompressed: [Bool] = []
    /// Each block's checksum (XXH64 of its stored bytes), verified on every read.
    private(set) var checksums: [UInt64] = []
    private(set) var places: [Place] = []
    private(set) var rawBytes = 0
    /// What every block is compressed against; nil for none.
    let dictionary: LZ4Dictionary?

    var storedBytes: Int { compressed.reduce(0) { $0 + $1.count } }

    /// Packs `records` in order into blocks of at most `blockSize` raw bytes;
    /// a record is never split, so one longer than a block makes a block of
    /// its own. A `blockSize` of 0 compresses each record alone.
    init(records: [[UInt8]], blockSize: Int, dictionary: [UInt8] = []) {
        self.dictionary = dictionary.isEmpty ? nil : LZ4Dictionary(dictionary)
        var block: [UInt8] = []
        for record in records {
            if !block.isEmpty, block.count + record.count > blockSize {
                seal(block)
                block.removeAll(keepingCapacity: true)
            }
            places.append(Place(block: compressed.count, range: block.count ..< block.count + record.count))
            block += record
            rawBytes += record.count
        }
        if !block.isEmpty { seal(block) }
    }

    var blockCount: Int { compressed.count }

    private mutating func seal(_ block: [UInt8]) {
        var output = [UInt8](repeating: 0, count: block.count)
        let length = block.withUnsafeBytes { source in
            output.withUnsafeMutableBytes { output in
                dictionary.map { $0.compress(source, into: output) } ?? LZ4.compress(source, into: output)
            }
        }
        rawLengths.append(block.count)
        defer { checksums.append(compressed[compressed.count - 1].withUnsafeBytes { XXHash64.hash($0) }) }
        if let length {
            compressed.append(Array(output[..<length]))
            isCompressed.append(true)
        } else {
            compressed.append(block)
            isCompressed.append(false)
        }
    }

    /// A cold read of record `index`: the block's checksum, the block up to
    /// the record's end decompressed into `scratch` (all of it with a
    /// dictionary), and the record's bytes copied out.
    /// - Returns: the record's bytes, or nil if the block does not decode.
    func read(_ index: Int, scratch: inout [UInt8]) -> [UInt8]? {
        let place = places[index]
        let block = compressed[place.block]
        guard block.withUnsafeBytes({ XXHash64.hash($0) }) == checksums[place.block] else { return nil }
        guard isCompressed[place.block] else { return Array(block[place.range]) }
        let rawLength = rawLengths[place.block]
        if scratch.count < rawLength { scratch = [UInt8](repeating: 0, count: rawLength) }
        let decoded = block.withUnsafeBytes { source in
            scratch.withUnsafeMutableBytes { scratch in
                guard let dictionary else {
                    // As the engine reads a block's values: only up to the record's end.
                    return LZ4.decompress(source, prefixInto: UnsafeMutableRawBufferPointer(rebasing: scratch[..<place.range.upperBound]))
                }
                return LZ4.decompress(source, into: UnsafeMutableRawBufferPointer(rebasing: scratch[..<rawLength]), dictionary: dictionary.contents)
            }
        }
        return decoded ? Array(scratch[place.range]) : nil
    }
}
