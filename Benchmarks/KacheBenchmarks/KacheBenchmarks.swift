import Benchmark
import Foundation
import Kache
import KacheWorkloads
import Synchronization

// Micro-benchmarks of Kache's hot paths, on the values of WORKLOADS.md.
//
//     cd Benchmarks
//     swift package benchmark                              # run them all
//     swift package benchmark --filter "get hit.*"         # some
//     swift package benchmark thresholds check             # compare with Thresholds/
//     swift package --allow-writing-to-package-directory benchmark thresholds update
//
// Mallocs are counted (the MallocInterposer trait) and are the figure the
// saved thresholds hold tightly: they don't depend on the machine's noise.
// Wall-clock thresholds are loose, for a 2-core machine shared with builds.

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal],
        warmupIterations: 3,
        scalingFactor: .kilo,
        maxDuration: .seconds(2),
        maxIterations: 1_000,
        thresholds: [
            .mallocCountTotal: .init(relative: [.p50: 5, .p90: 5], absolute: [.p50: 2, .p90: 2]),
            .wallClock: .init(relative: [.p50: 35, .p90: 50]),
            .throughput: .init(relative: [.p50: 35, .p90: 50]),
        ]
    )

    registerReads()
    registerSets()
    registerSweep()
    registerCodec()
    registerPool()
}

// MARK: - Fixtures

/// The values every benchmark stores: W1's 1 KiB text values from seed 42.
let textValues: [Data] = {
    var rng = SplitMix64(seed: SplitMix64.defaultSeed, thread: 0)
    return (0..<10_000).map { WorkloadValues.text(index: $0, byteCount: 1024, using: &rng) }
}()
let keys = WorkloadKeys.keys(count: 10_000)
let hour = Duration.seconds(3600)

/// A cache a benchmark's setup opens and its teardown closes (and removes, on disk).
final class Fixture: Sendable {
    private let state = Mutex<(cache: Kache, directory: URL?)?>(nil)

    var cache: Kache { state.withLock { $0!.cache } }

    /// Opens a cache in memory, or on disk in a fresh temporary directory.
    func open(_ configuration: Kache.Configuration) throws {
        if configuration.durability == .memory {
            let cache = try Kache(inMemory: configuration)
            state.withLock { $0 = (cache, nil) }
        } else {
            let directory = FileManager.default.temporaryDirectory.appendingPathComponent("kache-benchmarks-\(UUID().uuidString)")
            let cache = try Kache(directory: directory, configuration: configuration)
            state.withLock { $0 = (cache, directory) }
        }
    }

    /// Sets the first `count` keys to their text values.
    func load(count: Int) throws {
        for index in 0..<count { try cache.set(textValues[index], forKey: keys[index], ttl: hour) }
        try cache.save()
    }

    func close() {
        guard let opened = state.withLock({ state in defer { state = nil }; return state }) else { return }
        try? opened.cache.close()
        if let directory = opened.directory { try? FileManager.default.removeItem(at: directory) }
    }
}

// MARK: - Reads

func registerReads() {
    let memory = Fixture()
    Benchmark("get hit (memory)", closure: { benchmark in
        let cache = memory.cache
        for iteration in benchmark.scaledIterations {
            blackHole(cache.data(forKey: keys[iteration % keys.count]))
        }
    }, setup: {
        try memory.open(Kache.Configuration(memoryBudget: 1 << 30, durability: .memory))
        try memory.load(count: keys.count)
    }, teardown: { memory.close() })

    // A memory budget of 0 keeps no value in memory: every get reads, verifies
    // and decodes its file (from the page cache, as a restarted process would).
    let disk = Fixture()
    Benchmark("get hit (disk, cold)", configuration: .init(scalingFactor: .one), closure: { benchmark in
        let cache = disk.cache
        for iteration in benchmark.scaledIterations {
            blackHole(cache.data(forKey: keys[iteration % 1000]))
        }
    }, setup: {
        try disk.open(Kache.Configuration(memoryBudget: 0, durability: .sync))
        try disk.load(count: 1000)
    }, teardown: { disk.close() })

    let miss = Fixture()
    Benchmark("get miss", closure: { benchmark in
        let cache = miss.cache
        for _ in benchmark.scaledIterations {
            blackHole(cache.data(forKey: "key-9999999"))
        }
    }, setup: {
        try miss.open(Kache.Configuration(durability: .memory))
        try miss.load(count: keys.count)
    }, teardown: { miss.close() })
}

// MARK: - Sets

func registerSets() {
    for durability in [Durability.memory, .async] {
        let fixture = Fixture()
        Benchmark("set (\(durability.rawValue))", closure: { benchmark in
            let cache = fixture.cache
            for iteration in benchmark.scaledIterations {
                let index = iteration % keys.count
                try cache.set(textValues[index], forKey: keys[index], ttl: hour)
            }
        }, setup: {
            try fixture.open(Kache.Configuration(memoryBudget: 1 << 30, durability: durability))
        }, teardown: { fixture.close() })
    }
}

// MARK: - Sweep

func registerSweep() {
    // Each iteration sets 1,000 keys that expire in a second (not measured),
    // moves the clock past them, and measures the sweep that removes them.
    let clock = ManualClock()
    let fixture = Fixture()
    let value = textValues[0]
    Benchmark("sweep of 1,000 expired keys", configuration: .init(scalingFactor: .one), closure: { benchmark in
        let cache = fixture.cache
        for index in 0..<1000 { try cache.set(value, forKey: keys[index], ttl: .seconds(1)) }
        clock.advance(by: .seconds(2))
        benchmark.startMeasurement()
        let swept = cache.sweep()
        benchmark.stopMeasurement()
        precondition(swept == 1000, "the sweep removed \(swept) keys, not 1,000")
    }, setup: {
        try fixture.open(Kache.Configuration(durability: .memory, clock: clock))
    }, teardown: { fixture.close() })
}

// MARK: - Codec

func registerCodec() {
    // liblz4's block API on the two kinds of value, into a buffer allocated
    // once: the floor under Kache's own framing (see kache-bench W6).
    var rng = SplitMix64(seed: SplitMix64.defaultSeed, thread: 0)
    let inputs = [
        ("1 KiB text", textValues[0], BenchmarkScalingFactor.kilo),
        ("256 KiB blob", WorkloadValues.blob(byteCount: 256 * 1024, using: &rng), BenchmarkScalingFactor.one),
    ]
    for (name, value, scaling) in inputs {
        Benchmark("LZ4 compress \(name)", configuration: .init(scalingFactor: scaling)) { benchmark in
            var codec = RawLZ4Baseline(maxRawCount: value.count)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(codec.compressInPlace(value)) }
        }
        let block = RawLZ4Baseline.compress(value)
        Benchmark("LZ4 decompress \(name)", configuration: .init(scalingFactor: scaling)) { benchmark in
            var codec = RawLZ4Baseline(maxRawCount: value.count)
            benchmark.startMeasurement()
            for _ in benchmark.scaledIterations { blackHole(codec.decompressInPlace(block, rawCount: value.count)) }
        }
    }
}

// MARK: - Pool

func registerPool() {
    // A full Pool of 10,000: every set of a new key evicts the earliest-expiring one.
    let fixture = Fixture()
    let next = Atomic<Int>(0)
    let freshKeys = WorkloadKeys.keys(count: 2_000_000)
    Benchmark("Pool insert at capacity 10,000", closure: { benchmark in
        let pool = try fixture.cache.pool(named: "bench", capacity: 10_000)
        let value = textValues[0]
        for _ in benchmark.scaledIterations {
            let index = next.add(1, ordering: .relaxed).oldValue % freshKeys.count
            try pool.set(value, forKey: freshKeys[index], ttl: .seconds(Int64(600 + index % 3000)))
        }
    }, setup: {
        try fixture.open(Kache.Configuration(memoryBudget: 1 << 30, durability: .memory))
        let pool = try fixture.cache.pool(named: "bench", capacity: 10_000)
        for index in 0..<10_000 {
            try pool.set(textValues[index], forKey: freshKeys[index], ttl: .seconds(Int64(600 + index % 3000)))
        }
        next.store(10_000, ordering: .relaxed)
    }, teardown: { fixture.close() })
}
