import KacheStorage
import NIOCore

/// Commands submitted to one connection from any thread, encoded straight
/// into one buffer and written by the event loop in one go: a burst of
/// concurrent sends costs one hop to the loop, one buffer and one write, not
/// one of each per command.
///
/// A request's bytes and the request itself are added under one lock, so the
/// order of the bytes is the order of the requests, which is the order the
/// replies come back in.
final class RequestOutbox: Sendable {
    private struct State {
        /// The encoded commands waiting; nil once taken, until the next add.
        var bytes: ByteBuffer?
        var requests: [RedisRequest] = []
        var isScheduled = false
        /// The size of the last write and its count of requests, to size the next ones.
        var lastWrite = 0
        var lastCount = 0
    }

    private let state = Locked(State())
    private let allocator: ByteBufferAllocator

    init(allocator: ByteBufferAllocator) {
        self.allocator = allocator
    }

    /// Adds `request`, its commands written by `encode`; true when the caller
    /// must schedule a ``take()`` on the event loop.
    func add(_ request: RedisRequest, encode: (inout ByteBuffer) -> Void) -> Bool {
        state.withLock { state in
            if state.bytes == nil {
                // Sized like the last write, so a steady stream of bursts seldom grows a buffer;
                // capped, so one large burst doesn't make every later buffer large.
                state.bytes = allocator.buffer(capacity: min(max(state.lastWrite, 256), 64 << 10))
                state.requests.reserveCapacity(min(state.lastCount, 1024))
            }
            encode(&state.bytes!)
            state.requests.append(request)
            defer { state.isScheduled = true }
            return !state.isScheduled
        }
    }

    /// Everything submitted so far: the bytes, and the requests in the order of their commands.
    func take() -> (bytes: ByteBuffer, requests: [RedisRequest]) {
        state.withLock { state in
            state.isScheduled = false
            let bytes = state.bytes ?? allocator.buffer(capacity: 0)
            state.bytes = nil
            state.lastWrite = bytes.readableBytes
            state.lastCount = state.requests.count
            var requests: [RedisRequest] = []
            swap(&requests, &state.requests)
            return (bytes, requests)
        }
    }
}
