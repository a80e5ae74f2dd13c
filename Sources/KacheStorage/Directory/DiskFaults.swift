import Synchronization

/// Errors injected into the disk layer's system calls, for tests only: the
/// way to make an `open` fail with `EMFILE`, a `write` with `ENOSPC` or an
/// `fsync` with `EIO` on a chosen file, and check that the cache treats each
/// as what it is (a transient error or a full disk, never damage).
///
/// Rules are process-wide, so that every layer (the engine's `DiskStore`,
/// `CacheDirectory`, the lock) sees them without a parameter threaded through;
/// each rule names a path fragment (a test's own scratch folder), so tests
/// running in parallel don't see each other's faults. With no rule installed
/// a check costs one relaxed atomic load.
///
/// ```swift
/// DiskFaults.inject(EIO, on: .open, pathContaining: directory.path + "/objects", times: 1)
/// defer { DiskFaults.removeAll(pathContaining: directory.path) }
/// ```
package enum DiskFaults {
    /// The system calls a rule can fail.
    package enum Operation: String, Sendable, CaseIterable {
        case open, read, write, rename, fsync, mkdir
    }

    package struct Rule: Sendable {
        package var operation: Operation
        package var pathFragment: String
        package var errno: Int32
        /// Failures left, nil for every call.
        package var remaining: Int?
    }

    private static let rules = Mutex<[Rule]>([])
    private static let installed = Atomic<Int>(0)

    /// Makes the next `times` calls of `operation` on a path containing
    /// `pathFragment` fail with `code` (every call when `times` is nil).
    package static func inject(_ code: Int32, on operation: Operation, pathContaining pathFragment: String, times: Int? = nil) {
        rules.withLock { rules in
            rules.append(Rule(operation: operation, pathFragment: pathFragment, errno: code, remaining: times))
            installed.store(rules.count, ordering: .sequentiallyConsistent)
        }
    }

    /// Removes every rule whose path fragment contains `pathFragment`.
    package static func removeAll(pathContaining pathFragment: String) {
        rules.withLock { rules in
            rules.removeAll { $0.pathFragment.contains(pathFragment) }
            installed.store(rules.count, ordering: .sequentiallyConsistent)
        }
    }

    /// The errno `operation` on `path` must fail with, if a rule says so
    /// (using up one of its failures).
    package static func failure(_ operation: Operation, path: String) -> Int32? {
        guard installed.load(ordering: .relaxed) > 0 else { return nil }
        return rules.withLock { rules in
            guard let index = rules.firstIndex(where: {
                $0.operation == operation && path.contains($0.pathFragment) && ($0.remaining ?? 1) > 0
            }) else { return nil }
            if let remaining = rules[index].remaining { rules[index].remaining = remaining - 1 }
            return rules[index].errno
        }
    }
}
