import CLZ4
import Foundation

/// The codec floor: liblz4's block API at the default level, into buffers
/// allocated once and through an encoder state allocated once, with no
/// header, checksum or file around it.
///
/// Exists so that the cost a cache adds around compression (framing,
/// checksums, copies) can be read against the cost of LZ4 itself.
///
/// ```swift
/// let packed = RawLZ4Baseline.compress(value)
/// let unpacked = RawLZ4Baseline.decompress(packed, rawCount: value.count)
///
/// var lz4 = RawLZ4Baseline(maxRawCount: value.count)   // for a timing loop
/// for _ in 0..<1_000 { _ = lz4.compressInPlace(value) }
/// ```
public struct RawLZ4Baseline: Sendable {
    /// The largest input the in-place calls accept.
    public let maxRawCount: Int
    /// The reused output buffer of the in-place calls.
    public private(set) var buffer: [UInt8]
    /// How many bytes of ``buffer`` the last in-place call wrote.
    public private(set) var outputCount = 0
    /// Reset for each input (`LZ4_resetStream_fast`): `LZ4_compress_default`
    /// clears a new 16 KiB state on every call, which took half the time of
    /// compressing a 200-byte value. The engine keeps its states too.
    private var encoder = Encoder()

    /// Preallocates room for compressing, or decompressing to, up to `maxRawCount` bytes.
    public init(maxRawCount: Int) {
        precondition(maxRawCount >= 0 && maxRawCount <= Int(LZ4_MAX_INPUT_SIZE), "LZ4 blocks hold at most \(LZ4_MAX_INPUT_SIZE) bytes")
        self.maxRawCount = maxRawCount
        buffer = [UInt8](repeating: 0, count: max(maxRawCount, Int(LZ4_compressBound(Int32(maxRawCount)))))
    }

    /// The bytes the last in-place call wrote.
    public var output: ArraySlice<UInt8> { buffer[..<outputCount] }

    /// Compresses `data` into ``buffer`` and returns the compressed length.
    /// - Complexity: O(n).
    public mutating func compressInPlace(_ data: Data) -> Int {
        precondition(data.count <= maxRawCount, "\(data.count) bytes exceed the \(maxRawCount) this baseline was sized for")
        // A copy of this baseline shares the encoder: the first to compress gets its own.
        if !isKnownUniquelyReferenced(&encoder) { encoder = Encoder() }
        let stream = encoder.stream
        outputCount = buffer.withUnsafeMutableBytes { destination in
            data.withUnsafeBytes { Self.compress($0, into: destination, with: stream) }
        }
        return outputCount
    }

    /// Decompresses the block `data` into ``buffer``; returns `rawCount`.
    /// Traps if `data` is not a block of exactly `rawCount` bytes: this
    /// baseline only decodes what it encoded.
    /// - Complexity: O(n).
    public mutating func decompressInPlace(_ data: Data, rawCount: Int) -> Int {
        precondition(rawCount <= maxRawCount, "\(rawCount) bytes exceed the \(maxRawCount) this baseline was sized for")
        buffer.withUnsafeMutableBytes { destination in
            data.withUnsafeBytes {
                Self.decompress($0, into: UnsafeMutableRawBufferPointer(rebasing: destination[..<rawCount]))
            }
        }
        outputCount = rawCount
        return rawCount
    }

    /// `data` as one LZ4 block (at most `LZ4_compressBound(data.count)` bytes).
    /// - Complexity: O(n).
    public static func compress(_ data: Data) -> Data {
        var lz4 = RawLZ4Baseline(maxRawCount: data.count)
        _ = lz4.compressInPlace(data)
        return Data(lz4.output)
    }

    /// The `rawCount` bytes of the LZ4 block `data`. Traps if `data` is not
    /// a block of exactly `rawCount` bytes.
    /// - Complexity: O(n).
    public static func decompress(_ data: Data, rawCount: Int) -> Data {
        var raw = Data(count: rawCount)
        raw.withUnsafeMutableBytes { destination in
            data.withUnsafeBytes { decompress($0, into: destination) }
        }
        return raw
    }

    // MARK: - liblz4

    private static func compress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer,
                                 with stream: UnsafeMutablePointer<LZ4_stream_t>) -> Int {
        LZ4_resetStream_fast(stream)
        // An empty source may have no address; liblz4 accepts NULL with size 0.
        let written = LZ4_compress_fast_continue(
            stream,
            source.baseAddress?.assumingMemoryBound(to: CChar.self),
            destination.baseAddress?.assumingMemoryBound(to: CChar.self),
            Int32(source.count),
            Int32(clamping: destination.count),
            1
        )
        precondition(written > 0, "LZ4_compress_fast_continue failed for \(source.count) bytes")
        return Int(written)
    }

    private static func decompress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) {
        let produced = LZ4_decompress_safe(
            source.baseAddress?.assumingMemoryBound(to: CChar.self),
            destination.baseAddress?.assumingMemoryBound(to: CChar.self),
            Int32(clamping: source.count),
            Int32(clamping: destination.count)
        )
        precondition(Int(produced) == destination.count, "not an LZ4 block of \(destination.count) bytes (liblz4 returned \(produced))")
    }
}

/// liblz4's fast encoder state, freed with the last baseline that holds it.
private final class Encoder: @unchecked Sendable {
    // Used by one baseline at a time: a shared one is replaced before use.
    let stream: UnsafeMutablePointer<LZ4_stream_t>

    init() {
        guard let stream = LZ4_createStream() else { fatalError("liblz4 could not allocate an encoder state") }
        self.stream = stream
    }

    deinit { LZ4_freeStream(stream) }
}
