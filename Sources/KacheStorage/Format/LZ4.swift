import CLZ4

/// A thin wrapper over the system liblz4's block API.
///
/// The block API (not the frame format) because every entry file already has
/// its own header with both lengths and a checksum.
package enum LZ4 {
    /// Compresses `source` into `destination` and returns the compressed length,
    /// or `nil` when the result would not fit (that is, would not be smaller than
    /// `destination.count`). Inputs under 13 bytes never shrink.
    ///
    /// Through a kept state, reset for each input (`LZ4_resetStream_fast`):
    /// `LZ4_compress_default` clears a new 16 KiB state on every call, which
    /// took half the time of compressing a 200-byte value (250 against 420–640 ns).
    /// - Complexity: O(n).
    package static func compress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Int? {
        guard source.count > 0, source.count <= Int(LZ4_MAX_INPUT_SIZE), destination.count > 0 else { return nil }
        let written = fastStates.withState { stream in
            LZ4_resetStream_fast(stream)
            return LZ4_compress_fast_continue(
                stream,
                source.baseAddress!.assumingMemoryBound(to: CChar.self),
                destination.baseAddress!.assumingMemoryBound(to: CChar.self),
                Int32(source.count), Int32(clamping: destination.count), 1
            )
        }
        guard let written, written > 0 else { return nil }
        return Int(written)
    }

    private static let fastStates = LZ4States<LZ4_stream_t>(make: LZ4_createStream, free: { _ = LZ4_freeStream($0) })

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

    /// Decompresses what `LZ4Dictionary.compress` made, given the same
    /// dictionary bytes. Safe against hostile input, as `decompress(_:into:)`.
    /// Decompresses only the first `destination.count` bytes of the block
    /// `source`: LZ4 stops there, so a read of an early record pays for no
    /// more. True when exactly that many bytes came out.
    package static func decompress(_ source: UnsafeRawBufferPointer, prefixInto destination: UnsafeMutableRawBufferPointer) -> Bool {
        if destination.count == 0 { return true }
        guard source.count > 0, source.count <= Int(Int32.max), destination.count <= Int(Int32.max) else { return false }
        let produced = LZ4_decompress_safe_partial(
            source.baseAddress!.assumingMemoryBound(to: CChar.self),
            destination.baseAddress!.assumingMemoryBound(to: CChar.self),
            Int32(source.count),
            Int32(destination.count),
            Int32(destination.count)
        )
        return Int(produced) == destination.count
    }

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

/// Bytes to compress many inputs against, each alone, so that what an input
/// shares with them costs little; the reader needs the same bytes
/// (`LZ4.decompress(_:into:dictionary:)`).
///
/// Loaded into a compression state once; each input starts from a copy of
/// that state, which liblz4's documentation gives as the way to reuse a
/// dictionary (its faster `LZ4_attach_dictionary` is not exported by the
/// shared library). Loading it for every input cost 7 µs a 200-byte record.
package final class LZ4Dictionary: @unchecked Sendable {
    // Immutable after init; each compression works on its own copy of the state.
    private let bytes: UnsafeMutableRawBufferPointer
    private let loaded: UnsafeMutablePointer<LZ4_stream_t>

    package init(_ dictionary: [UInt8]) {
        let bytes = UnsafeMutableRawBufferPointer.allocate(byteCount: max(dictionary.count, 1), alignment: 16)
        dictionary.withUnsafeBytes { bytes.copyMemory(from: $0) }
        self.bytes = bytes
        loaded = UnsafeMutablePointer<LZ4_stream_t>.allocate(capacity: 1)
        LZ4_initStream(loaded, MemoryLayout<LZ4_stream_t>.size)
        if !dictionary.isEmpty {
            LZ4_loadDict(loaded, bytes.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(clamping: dictionary.count))
        }
        count = dictionary.count
    }

    deinit {
        bytes.deallocate()
        loaded.deallocate()
    }

    /// The dictionary's length in bytes.
    package let count: Int

    /// The dictionary's bytes, for decompressing.
    package var contents: UnsafeRawBufferPointer { UnsafeRawBufferPointer(rebasing: bytes[..<count]) }

    /// Compresses `source` alone against the dictionary; nil when the result
    /// would not fit `destination`.
    package func compress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Int? {
        guard source.count > 0, source.count <= Int(LZ4_MAX_INPUT_SIZE), destination.count > 0 else { return nil }
        var working = loaded.pointee
        let written = LZ4_compress_fast_continue(
            &working,
            source.baseAddress!.assumingMemoryBound(to: CChar.self),
            destination.baseAddress!.assumingMemoryBound(to: CChar.self),
            Int32(source.count), Int32(clamping: destination.count), 1
        )
        return written > 0 ? Int(written) : nil
    }
}

/// LZ4's high-compression encoder (`lz4hc`): the same block format, so the
/// same decoder reads it, at a fraction of the fast encoder's speed.
///
/// A segment block's values go through it: on W8's JSON values it stores
/// 12 % fewer bytes than the fast encoder at level 2, its fastest
/// (CHANGELOG.md, 0.3.0), and decoding is no slower.
/// An encoder's state is 256 KiB that liblz4 would allocate and clear on
/// every call, so states are kept in a pool and only reset between inputs
/// (`LZ4_resetStreamHC_fast`).
package enum LZ4HighCompression {
    /// lz4hc's level 2: two match searches a position. Higher levels took
    /// W8's values from 30.0 to 29.8 MiB for 25 % more time.
    package static let level: Int32 = 2

    private static let states = LZ4States<LZ4_streamHC_t>(make: LZ4_createStreamHC, free: { _ = LZ4_freeStreamHC($0) })

    /// Compresses `source` into `destination` and returns the compressed
    /// length, or nil when it would not fit (or no state could be made).
    /// - Complexity: O(n).
    package static func compress(_ source: UnsafeRawBufferPointer, into destination: UnsafeMutableRawBufferPointer) -> Int? {
        guard source.count > 0, source.count <= Int(LZ4_MAX_INPUT_SIZE), destination.count > 0 else { return nil }
        let written = states.withState { stream in
            LZ4_resetStreamHC_fast(stream, level)
            return LZ4_compress_HC_continue(
                stream,
                source.baseAddress!.assumingMemoryBound(to: CChar.self),
                destination.baseAddress!.assumingMemoryBound(to: CChar.self),
                Int32(source.count), Int32(clamping: destination.count)
            )
        }
        guard let written, written > 0 else { return nil }
        return Int(written)
    }
}

/// Encoder states kept for reuse, for an encoder whose state liblz4 would
/// otherwise allocate and clear on every call. Each state is used by one
/// thread at a time; at most one a thread that compresses at once stays idle.
private final class LZ4States<Stream>: Sendable {
    /// One state, owned by whoever took it from the pool.
    private final class State: @unchecked Sendable {
        let stream: UnsafeMutablePointer<Stream>
        let free: @Sendable (UnsafeMutablePointer<Stream>) -> Void

        init(stream: UnsafeMutablePointer<Stream>, free: @escaping @Sendable (UnsafeMutablePointer<Stream>) -> Void) {
            self.stream = stream
            self.free = free
        }

        deinit { free(stream) }
    }

    private let idle = Locked<[State]>([])
    private let make: @Sendable () -> UnsafeMutablePointer<Stream>?
    private let free: @Sendable (UnsafeMutablePointer<Stream>) -> Void

    init(make: @escaping @Sendable () -> UnsafeMutablePointer<Stream>?, free: @escaping @Sendable (UnsafeMutablePointer<Stream>) -> Void) {
        self.make = make
        self.free = free
    }

    /// Runs `body` with a state no other thread holds meanwhile; nil when none could be made.
    func withState<R>(_ body: (UnsafeMutablePointer<Stream>) -> R) -> R? {
        guard let state = idle.withLock({ $0.popLast() }) ?? make().map({ State(stream: $0, free: free) }) else { return nil }
        defer { idle.withLock { $0.append(state) } }
        return body(state.stream)
    }
}
