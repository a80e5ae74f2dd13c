import CKacheSystem
import Synchronization

/// A value behind a `Synchronization.Mutex` whose acquire and release are also
/// announced to ThreadSanitizer.
///
/// Why not a bare `Mutex`: on Linux the Synchronization module ships prebuilt
/// without TSan instrumentation, so TSan can't see the lock's happens-before
/// edges and reports every access made under it as a race (two threads
/// incrementing a counter under a `Mutex` show it). The annotations cost two
/// empty C calls per lock in normal builds and make `swift test
/// --sanitize=thread` meaningful for everything else.
///
/// Inlinable: the index's shard locks are taken on every read, from the
/// engine's module, and an unspecialized generic call across the module
/// boundary would cost each read more than the lock itself.
package final class Locked<Value: Sendable>: Sendable {
    @usableFromInline
    let mutex: Mutex<Value>

    @inlinable
    package init(_ value: Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with the value, holding the lock. Keep it short and free of I/O.
    @inlinable
    package func withLock<R: Sendable, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        let address = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
        return try mutex.withLock { (value: inout Value) throws(E) -> R in
            kache_tsan_acquire(address)
            defer { kache_tsan_release(address) }
            return try body(&value)
        }
    }
}
