import Synchronization

/// Errors injected into the disk layer's system calls, for tests only: the
/// way to make an `open` fail with `EMFILE`, a `write` with `ENOSPC` or an
/// `fsync` with `EIO` on a chosen file, or a `write` write only part of its
/// bytes, and check that the cache treats each as what it is (a transient
/// error or a full disk, never damage).
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
        /// `fsync` of a folder, after a file in it was created, renamed or deleted.
        case fsyncFolder
    }

    package struct Rule: Sendable {
        package var operation: Operation
        package var pathFragment: String
        package var errno: Int32
        /// Failures left, nil for every call.
        package var remaining: Int?
        /// For a short write: the most bytes a `write` call writes (it succeeds
        /// with that count); nil for a rule that fails its calls with `errno`.
        package var shortLength: Int? = nil
        /// For a short write: the errno the next `write` on the path fails
        /// with (a full disk found by the call after the short one).
        package var thenFailing: Int32? = nil
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

    /// Makes the next `times` `write` calls on a path containing `pathFragment`
    /// write at most `bytes` bytes and return that count, as write(2) may
    /// (near a full disk, on a signal): the caller has to write the rest or
    /// report a failure. With `thenFailing`, the `write` after each short one fails with that errno.
    package static func injectShortWrite(
        ofAtMost bytes: Int, pathContaining pathFragment: String, times: Int? = nil, thenFailing code: Int32? = nil
    ) {
        rules.withLock { rules in
            rules.append(Rule(operation: .write, pathFragment: pathFragment, errno: 0, remaining: times, shortLength: bytes, thenFailing: code))
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
                $0.operation == operation && $0.shortLength == nil && path.contains($0.pathFragment) && ($0.remaining ?? 1) > 0
            }) else { return nil }
            if let remaining = rules[index].remaining { rules[index].remaining = remaining - 1 }
            return rules[index].errno
        }
    }

    /// The bytes a `write` of `count` bytes to `path` may write: `count`, or
    /// less if a short-write rule says so (using up one of its writes).
    package static func writeLength(_ count: Int, path: String) -> Int {
        guard installed.load(ordering: .relaxed) > 0 else { return count }
        return rules.withLock { rules in
            guard let index = rules.firstIndex(where: {
                $0.shortLength != nil && path.contains($0.pathFragment) && ($0.remaining ?? 1) > 0
            }) else { return count }
            if let remaining = rules[index].remaining { rules[index].remaining = remaining - 1 }
            let rule = rules[index]
            if let code = rule.thenFailing {
                // Ahead of the other rules, so that it is the next write's.
                rules.insert(Rule(operation: .write, pathFragment: rule.pathFragment, errno: code, remaining: 1), at: 0)
                installed.store(rules.count, ordering: .sequentiallyConsistent)
            }
            return min(count, rule.shortLength!)
        }
    }
}
