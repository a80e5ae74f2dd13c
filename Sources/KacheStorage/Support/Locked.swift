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
/// Public and inlinable, where the rest of this target is `package`: the
/// engine takes these locks on every read and write, and the compiler
/// specializes an `@inlinable` generic for another module only when it is
/// public (Swift 6.3 left 173 calls from the engine unspecialized while this
/// was `package`, and W2's gets slowed by a fifth). `KacheStorage` is no
/// product, so users still can't see it.
public final class Locked<Value: Sendable>: Sendable {
    @usableFromInline
    let mutex: Mutex<Value>

    @inlinable
    public init(_ value: Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with the value, holding the lock. Keep it short and free of I/O.
    @inlinable
    public func withLock<R: Sendable, E: Error>(_ body: (inout Value) throws(E) -> R) throws(E) -> R {
        let address = UnsafeRawPointer(Unmanaged.passUnretained(self).toOpaque())
        return try mutex.withLock { (value: inout Value) throws(E) -> R in
            kache_tsan_acquire(address)
            defer { kache_tsan_release(address) }
            return try body(&value)
        }
    }
}
