import Foundation

/// Passes a response body from the network on to its reader chunk by chunk,
/// keeping a copy in memory for the cache while it is no longer than `limit`
/// bytes, and hands the cache the outcome once it is known: the whole body
/// when it was read to its end, or nil as soon as it grew past the limit.
///
/// The cache never sees a body that did not end: when the network fails (an
/// error from the body) or the reader stops early, `keep` is not called with
/// data, and after an error the body ends for good, so that a reader that
/// goes on can't make a cut-off body look whole.
///
/// `@unchecked Sendable`: its state is reached only from ``next()``, which
/// the body's one reader calls one call after another, never concurrently
/// (AsyncIteratorProtocol's rule).
final class BodyKeeper: @unchecked Sendable {
    private enum State {
        /// Reading, the chunks so far kept.
        case keeping(Data)
        /// Reading, the body too long to keep.
        case passing
        /// The body ended, failed or was handed over: nothing more is read.
        case done
    }

    private let limit: Int
    private let keep: @Sendable (Data?) async -> CacheStatus?
    private var chunks: HTTPResponseBody.AsyncIterator
    private var state = State.keeping(Data())

    private init(_ body: HTTPResponseBody, limit: Int, keep: @escaping @Sendable (Data?) async -> CacheStatus?) {
        self.limit = limit
        self.keep = keep
        chunks = body.makeAsyncIterator()
    }

    /// `body` as its reader reads it, kept for `keep` on the way. The keeper
    /// is made when the iteration begins and lives in its iterator, so that a
    /// reader that stops early releases the network's body with it.
    static func body(_ body: HTTPResponseBody, limit: Int, keep: @escaping @Sendable (Data?) async -> CacheStatus?) -> HTTPResponseBody {
        HTTPResponseBody(makeNext: {
            let keeper = BodyKeeper(body, limit: limit, keep: keep)
            return { try await keeper.next() }
        })
    }

    /// The next chunk of the body; at its end, the body is handed to the cache first.
    private func next() async throws -> Data? {
        if case .done = state { return nil }
        let chunk: Data?
        do {
            chunk = try await chunks.next()
        } catch {
            state = .done
            throw error
        }
        guard let chunk else {
            if case let .keeping(whole) = state {
                state = .done
                _ = await keep(whole)
            }
            state = .done
            return nil
        }
        if case var .keeping(kept) = state {
            if kept.count + chunk.count <= limit {
                // Released first, so that the append does not copy what was kept.
                state = .passing
                kept.append(chunk)
                state = .keeping(kept)
            } else {
                state = .passing
                _ = await keep(nil)
            }
        }
        return chunk
    }
}
