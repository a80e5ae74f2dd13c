import Foundation
import Synchronization

/// The in-memory floor: a dictionary behind one lock, with no expiry, no
/// eviction and no disk.
///
/// Exists so that a cache's memory-hit figures (W2, W3) can be read against
/// the least work any thread-safe `String -> Data` map can do; a cache's
/// gets/s above this would mean the benchmark is measuring something else.
///
/// ```swift
/// let floor = MutexDictionaryBaseline()
/// floor.set(value, forKey: "key-0000001")
/// let hit = floor.get("key-0000001") != nil
/// ```
public final class MutexDictionaryBaseline: Sendable {
    private let storage: Mutex<[String: Data]>

    /// Creates an empty map with room for `minimumCapacity` keys.
    public init(minimumCapacity: Int = 0) {
        storage = Mutex(Dictionary(minimumCapacity: minimumCapacity))
    }

    /// Stores `value` under `key`, replacing any earlier value.
    /// - Complexity: O(1) amortized.
    public func set(_ value: Data, forKey key: String) {
        storage.withLock { $0[key] = value }
    }

    /// The value stored under `key`, if any.
    /// - Complexity: O(1).
    public func get(_ key: String) -> Data? {
        storage.withLock { $0[key] }
    }

    /// The number of keys stored.
    public var count: Int {
        storage.withLock { $0.count }
    }
}
