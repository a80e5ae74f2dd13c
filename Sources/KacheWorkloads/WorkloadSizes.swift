/// The sizes of the standard workloads, and a quick scaling of them (about 20×
/// smaller) for a smoke run or a CI job that must finish in seconds.
///
/// ```swift
/// let sizes: WorkloadSizes = quick ? .quick : .standard
/// let zipf = ZipfDistribution(count: sizes.keyCount)
/// ```
public struct WorkloadSizes: Sendable, Equatable {
    /// N: the keys W1 loads and W2, W3 and W5 then use.
    public var keyCount: Int
    /// The size of a W1 or W3 text value.
    public var textValueBytes: Int
    /// The TTL of a W1 or W3 set, in seconds.
    public var ttlSeconds: Int64
    /// W2: gets, keys by Zipf.
    public var readOps: Int
    /// W3: mixed gets and sets, keys by Zipf.
    public var mixedOps: Int
    /// W4: sets into the Pool.
    public var churnOps: Int
    /// W4: the keys the Zipf draws range over.
    public var churnKeyCount: Int
    /// W4: the Pool's capacity.
    public var churnCapacity: Int
    /// W4: the size of a text value.
    public var churnValueBytes: Int
    /// W6: the blob values set.
    public var blobCount: Int
    /// W6: the size of a blob value.
    public var blobBytes: Int
    /// W6: gets, uniform over the blobs.
    public var blobGets: Int
    /// W7: pushes into the Queue (a pop follows every second push).
    public var queuePushes: Int
    /// W7: the Queue's capacity.
    public var queueCapacity: Int
    /// W8: the small text values set, keys in index order.
    public var manySmallCount: Int
    /// W8: the size of a text value.
    public var manySmallValueBytes: Int
    /// W8: after the reopen, every this-many-th key is read.
    public var manySmallReadStride: Int
    /// W9: the requests of each hit-ratio trace (over the N keys of `keyCount`).
    public var hitRatioRequests: Int

    /// The sizes WORKLOADS.md specifies; report figures only from these.
    public static let standard = WorkloadSizes(
        keyCount: 100_000, textValueBytes: 1024, ttlSeconds: 3600,
        readOps: 1_000_000, mixedOps: 1_000_000,
        churnOps: 1_000_000, churnKeyCount: 1_000_000, churnCapacity: 10_000, churnValueBytes: 256,
        blobCount: 2_000, blobBytes: 256 * 1024, blobGets: 10_000,
        queuePushes: 1_000_000, queueCapacity: 10_000,
        manySmallCount: 1_000_000, manySmallValueBytes: 200, manySmallReadStride: 100,
        hitRatioRequests: 1_000_000
    )

    /// About 20× fewer keys and operations, with the same value sizes and
    /// TTLs, so that per-operation figures stay comparable in kind.
    public static let quick = WorkloadSizes(
        keyCount: 5_000, textValueBytes: 1024, ttlSeconds: 3600,
        readOps: 50_000, mixedOps: 50_000,
        churnOps: 50_000, churnKeyCount: 50_000, churnCapacity: 500, churnValueBytes: 256,
        blobCount: 100, blobBytes: 256 * 1024, blobGets: 500,
        queuePushes: 50_000, queueCapacity: 500,
        manySmallCount: 50_000, manySmallValueBytes: 200, manySmallReadStride: 100,
        hitRatioRequests: 50_000
    )
}
