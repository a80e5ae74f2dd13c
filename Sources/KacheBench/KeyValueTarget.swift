import Foundation
import Kache
import KacheWorkloads

/// What the read and mixed loops drive: Kache, or an in-memory floor. The
/// loops are generic over it, so both run the very same specialized code.
protocol KeyValueTarget: Sendable {
    func value(forKey key: String) -> Data?
    func store(_ value: Data, forKey key: String, ttl: Duration) throws
}

extension Kache: KeyValueTarget {
    @inline(__always)
    func value(forKey key: String) -> Data? { data(forKey: key) }

    @inline(__always)
    func store(_ value: Data, forKey key: String, ttl: Duration) throws { try set(value, forKey: key, ttl: ttl) }
}

extension MutexDictionaryBaseline: KeyValueTarget {
    @inline(__always)
    func value(forKey key: String) -> Data? { get(key) }

    /// The floor has no expiry: the TTL is ignored.
    @inline(__always)
    func store(_ value: Data, forKey key: String, ttl: Duration) { set(value, forKey: key) }
}

extension ShardedDictionaryBaseline: KeyValueTarget {
    @inline(__always)
    func value(forKey key: String) -> Data? { get(key) }

    /// The floor has no expiry: the TTL is ignored.
    @inline(__always)
    func store(_ value: Data, forKey key: String, ttl: Duration) { set(value, forKey: key) }
}
