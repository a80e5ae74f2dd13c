import Foundation
import Synchronization

/// A response body as it arrives: an `AsyncSequence` of byte chunks, from
/// ``HTTPTransport/stream(_:)`` and ``CachingClient/stream(for:)``.
///
/// ```swift
/// let answer = try await client.stream(for: URLRequest(url: videoURL))
/// for try await chunk in answer.body {
///     try file.write(contentsOf: chunk)
/// }
/// ```
///
/// A body is read once: it is the network's bytes, not a copy of them, so
/// only the first iteration gets chunks; another gets none. An error thrown
/// while it is read is the transport's: a connection that broke off is
/// ``HTTPTransportError/network(url:detail:)``, cancellation `CancellationError`.
/// A reader that stops early (leaves its loop, or is cancelled) lets the
/// transport end the exchange once the iterator is gone.
public struct HTTPResponseBody: AsyncSequence, Sendable {
    /// A chunk of the body, as the transport received it; never empty.
    public typealias Element = Data
    /// The transport's error, when the body could not be read to its end.
    public typealias Failure = any Error

    /// Makes the function that yields the chunks, for the one iteration.
    private let makeNext: @Sendable () -> @Sendable () async throws -> Data?
    /// Whether an iteration began; shared by the copies of the body.
    private let iterated = IterationMark()
    /// The whole body, when it arrived whole: ``collected()`` returns it without a copy.
    private var whole: Data?

    /// A body of the chunks of `chunks`, read as they come. An empty chunk is skipped.
    ///
    /// ```swift
    /// let body = HTTPResponseBody(stream)   // an AsyncThrowingStream<Data, any Error>
    /// ```
    public init<Chunks: AsyncSequence & Sendable>(_ chunks: Chunks) where Chunks.Element == Data {
        makeNext = {
            let cursor = Cursor(chunks.makeAsyncIterator())
            return { try await cursor.next() }
        }
    }

    /// A body of one chunk, `data` (no chunk at all when it is empty): a
    /// body that arrived whole, or one from the cache.
    public init(_ data: Data) {
        whole = data
        makeNext = {
            let remaining = Cursor(OneChunk(data: data.isEmpty ? nil : data))
            return { try await remaining.next() }
        }
    }

    /// A body whose chunks come from the function `makeNext` makes when the
    /// iteration begins; that function returns nil at the end, and is called
    /// again only after its previous call returned.
    init(makeNext: @escaping @Sendable () -> @Sendable () async throws -> Data?) {
        self.makeNext = makeNext
    }

    /// Reads the chunks in order.
    public struct AsyncIterator: AsyncIteratorProtocol {
        private let nextChunk: @Sendable () async throws -> Data?

        fileprivate init(_ nextChunk: @escaping @Sendable () async throws -> Data?) {
            self.nextChunk = nextChunk
        }

        /// The next chunk, or nil at the end of the body.
        /// - Throws: the transport's error when the body could not be read to its end.
        public mutating func next() async throws -> Data? {
            try await nextChunk()
        }
    }

    /// Starts reading the body; only the first iterator gets its chunks.
    public func makeAsyncIterator() -> AsyncIterator {
        iterated.begin() ? AsyncIterator(makeNext()) : AsyncIterator({ nil })
    }

    /// The whole body, read into memory.
    ///
    /// ```swift
    /// let data = try await answer.body.collected()
    /// ```
    /// - Throws: the transport's error when the body could not be read to its end.
    public func collected() async throws -> Data {
        if let whole { return whole }
        var data = Data()
        for try await chunk in self {
            data.append(chunk)
        }
        return data
    }
}

/// Whether a body's iteration began: a transport's body (AsyncHTTPClient's)
/// may be iterated only once, and a second reader of a body kept for the
/// cache must not look like a body that ended with nothing.
private final class IterationMark: Sendable {
    private let began = Mutex(false)

    /// True the first time only.
    func begin() -> Bool {
        began.withLock { began in
            defer { began = true }
            return !began
        }
    }
}

/// An iterator a `@Sendable` function can advance. `@unchecked`: the
/// iterator is reached only from `next`, which the body's one reader calls
/// one call after another, never concurrently (AsyncIteratorProtocol's own rule).
private final class Cursor<Iterator: AsyncIteratorProtocol>: @unchecked Sendable where Iterator.Element == Data {
    private var iterator: Iterator

    init(_ iterator: Iterator) {
        self.iterator = iterator
    }

    func next() async throws -> Data? {
        while let chunk = try await iterator.next() {
            if !chunk.isEmpty { return chunk }
        }
        return nil
    }
}

/// The iterator of a body of one chunk.
private struct OneChunk: AsyncIteratorProtocol {
    var data: Data?

    mutating func next() async throws -> Data? {
        defer { data = nil }
        return data
    }
}
