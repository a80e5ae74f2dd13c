import CLZ4

/// A thin wrapper over the system liblz4's block API.
///
/// The block API (not the frame format) because every entry file already has
/// its own header with both lengths and a checksum.
package enum LZ4 {
    /// Compresses `source` into `destination` and returns the compressed length,
    /// or `nil` when the result would not fit (that is, would not be smaller than
    /// `destination.count`). Inputs under 13 bytes never shrink.
    /// - Complexity: O(n).
    package static func compress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Int? {
        guard source.count > 0, source.count <= Int(LZ4_MAX_INPUT_SIZE), destination.count > 0 else { return nil }
        let written = LZ4_compress_default(
            source.baseAddress!.assumingMemoryBound(to: CChar.self),
            destination.baseAddress!.assumingMemoryBound(to: CChar.self),
            Int32(source.count),
            Int32(clamping: destination.count)
        )
        return written > 0 ? Int(written) : nil
    }

    /// Decompresses `source` into `destination`, which must be exactly the raw
    /// length. Returns `false` when the input is malformed or does not fill it.
    /// Safe against hostile input: liblz4's `_safe` decoder never writes past
    /// `destination` nor reads past `source`.
    package static func decompress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Bool {
        if destination.count == 0 { return source.count == 0 }
        guard source.count > 0, source.count <= Int(Int32.max), destination.count <= Int(Int32.max) else { return false }
        let produced = LZ4_decompress_safe(
            source.baseAddress!.assumingMemoryBound(to: CChar.self),
            destination.baseAddress!.assumingMemoryBound(to: CChar.self),
            Int32(source.count),
            Int32(destination.count)
        )
        return Int(produced) == destination.count
    }

    /// Compresses `source` alone against `dictionary` (bytes the decoder will
    /// hold too), so that what it shares with them costs little. Returns the
    /// compressed length, or nil when the result would not fit.
    package static func compress(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer, dictionary: UnsafeRawBufferPointer
    ) -> Int? {
        guard source.count > 0, source.count <= Int(LZ4_MAX_INPUT_SIZE), destination.count > 0,
              let stream = LZ4_createStream() else { return nil }
        defer { LZ4_freeStream(stream) }
        if dictionary.count > 0 {
            LZ4_loadDict(stream, dictionary.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(clamping: dictionary.count))
        }
        let written = LZ4_compress_fast_continue(
            stream,
            source.baseAddress!.assumingMemoryBound(to: CChar.self),
            destination.baseAddress!.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(clamping: destination.count), 1
        )
        return written > 0 ? Int(written) : nil
    }

    /// Decompresses what `compress(_:into:dictionary:)` made, given the same
    /// dictionary. Safe against hostile input, as `decompress(_:into:)`.
    package static func decompress(
        _ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer, dictionary: UnsafeRawBufferPointer
    ) -> Bool {
        if destination.count == 0 { return source.count == 0 }
        guard source.count > 0, source.count <= Int(Int32.max), destination.count <= Int(Int32.max) else { return false }
        let produced = LZ4_decompress_safe_usingDict(
            source.baseAddress!.assumingMemoryBound(to: CChar.self),
            destination.baseAddress!.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(destination.count),
            dictionary.baseAddress.map { $0.assumingMemoryBound(to: CChar.self) }, Int32(clamping: dictionary.count)
        )
        return Int(produced) == destination.count
    }
}
