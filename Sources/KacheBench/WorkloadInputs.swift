import Foundation
import KacheWorkloads

/// The generated inputs of the workloads, made before any clock starts, from
/// the generators and in the draw order of WORKLOADS.md.
///
/// Every workload starts its streams afresh (thread t draws from seed + t), so
/// that each can run alone and every run of it repeats the same operations.
/// Values are generated in full up front, never inside a timed loop: W4 and W7
/// hold a million 256-byte values (about 350 MB) while they run, which the
/// peak resident memory they report includes.
final class WorkloadInputs {
    let sizes: WorkloadSizes
    let seed: UInt64

    init(sizes: WorkloadSizes, seed: UInt64) {
        self.sizes = sizes
        self.seed = seed
    }

    /// The TTL of every W1, W3, W6 and W7 value.
    var ttl: Duration { .seconds(sizes.ttlSeconds) }

    // MARK: - W1, and the load before W2, W3 and W5

    /// The N keys, in index order.
    private(set) lazy var loadKeys: [String] = WorkloadKeys.keys(count: sizes.keyCount)

    /// The N text values, drawn in key order from the stream of thread 0.
    private(set) lazy var loadValues: [Data] = {
        var rng = SplitMix64(seed: seed, thread: 0)
        return (0..<sizes.keyCount).map { WorkloadValues.text(index: $0, byteCount: sizes.textValueBytes, using: &rng) }
    }()

    private lazy var keyZipf = ZipfDistribution(count: sizes.keyCount)

    // MARK: - W2, W3

    /// W2's keys, one list per thread: Zipf draws from each thread's stream,
    /// the reads split evenly between the threads.
    func readKeys(threads: Int) -> [[String]] {
        (0..<threads).map { thread in
            var rng = SplitMix64(seed: seed, thread: thread)
            return (0..<Self.share(of: sizes.readOps, thread: thread, threads: threads)).map { _ in
                WorkloadKeys.key(keyZipf.sample(&rng))
            }
        }
    }

    /// W3's operations, one list per thread: for each, the kind (90 % gets),
    /// then the key by Zipf, then for a set the bytes of a fresh text value.
    func mixedOperations(threads: Int) -> [[MixedOperation]] {
        (0..<threads).map { thread in
            var rng = SplitMix64(seed: seed, thread: thread)
            return (0..<Self.share(of: sizes.mixedOps, thread: thread, threads: threads)).map { _ in
                let isGet = WorkloadDraws.isGet(&rng)
                let index = keyZipf.sample(&rng)
                if isGet { return .get(WorkloadKeys.key(index)) }
                return .set(WorkloadKeys.key(index), WorkloadValues.text(index: index, byteCount: sizes.textValueBytes, using: &rng))
            }
        }
    }

    // MARK: - W4

    /// W4's sets: for each, the key by Zipf over the churn keys, the TTL, then the value's bytes.
    func churnOperations() -> ChurnOperations {
        let zipf = ZipfDistribution(count: sizes.churnKeyCount)
        var rng = SplitMix64(seed: seed, thread: 0)
        var operations = ChurnOperations()
        operations.keys.reserveCapacity(sizes.churnOps)
        operations.ttlSeconds.reserveCapacity(sizes.churnOps)
        operations.values.reserveCapacity(sizes.churnOps)
        for _ in 0..<sizes.churnOps {
            let index = zipf.sample(&rng)
            operations.keys.append(WorkloadKeys.key(index))
            operations.ttlSeconds.append(WorkloadDraws.randomTTLSeconds(&rng))
            operations.values.append(WorkloadValues.text(index: index, byteCount: sizes.churnValueBytes, using: &rng))
        }
        return operations
    }

    // MARK: - W6

    /// W6's blobs in set order, then its gets (uniform: `next() % count`), from one stream.
    func blobOperations() -> BlobOperations {
        var rng = SplitMix64(seed: seed, thread: 0)
        let values = (0..<sizes.blobCount).map { _ in WorkloadValues.blob(byteCount: sizes.blobBytes, using: &rng) }
        let reads = (0..<sizes.blobGets).map { _ in Int(rng.next() % UInt64(sizes.blobCount)) }
        return BlobOperations(keys: WorkloadKeys.keys(count: sizes.blobCount), values: values, reads: reads)
    }

    // MARK: - W7

    /// W7's items: WORKLOADS.md leaves them open; kache-bench pushes W4's kind
    /// of value (256-byte text, the push's number as its index), from the stream of thread 0.
    func queueValues() -> [Data] {
        var rng = SplitMix64(seed: seed, thread: 0)
        return (0..<sizes.queuePushes).map { WorkloadValues.text(index: $0, byteCount: sizes.churnValueBytes, using: &rng) }
    }

    // MARK: - W8

    /// W8's sets: keys in index order, for each the value's bytes then the
    /// TTL, from the stream of thread 0. Made afresh on each call (a million
    /// values, about 250 MB, are not kept between workloads).
    func manySmallSets() -> ManySmallSets {
        ManySmallSets(count: sizes.manySmallCount, valueBytes: sizes.manySmallValueBytes, seed: seed)
    }

    // MARK: - W9

    /// W9's trace `kind`: `hitRatioRequests` requests over the N keys, from the stream of thread 0.
    func hitRatioTrace(_ kind: HitRatioTrace.Kind) -> HitRatioTrace {
        HitRatioTrace(kind, keyCount: sizes.keyCount, requests: sizes.hitRatioRequests, seed: seed)
    }

    /// Thread `thread`'s share of `total` operations (the first threads take the remainder).
    static func share(of total: Int, thread: Int, threads: Int) -> Int {
        total / threads + (thread < total % threads ? 1 : 0)
    }
}

/// One operation of W3.
enum MixedOperation: Sendable {
    case get(String)
    case set(String, Data)
}

/// W4's sets, as three parallel arrays.
struct ChurnOperations: Sendable {
    var keys: [String] = []
    var ttlSeconds: [Int64] = []
    var values: [Data] = []
}

/// W6's blobs and the order it reads them in.
struct BlobOperations: Sendable {
    var keys: [String]
    var values: [Data]
    /// Indices into `keys`, one per get.
    var reads: [Int]

    var bytesSet: Int { values.reduce(0) { $0 + $1.count } }
}
