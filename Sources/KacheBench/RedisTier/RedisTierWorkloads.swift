import Foundation
import Kache
import KacheRedis
import KacheWorkloads
import NIOCore
import Synchronization

/// The workloads of `--tier redis`, each a ``WorkloadResult`` whose baselines
/// are `redis-benchmark --cluster` (or, for local hits, the Mutex dictionary)
/// measured in the same run; with `--redis-tls` both sides use TLS.
///
/// The local tier is memory-only, so the figures are of the shared tier and
/// the tiering, not of the disk. Values are W1's 1 KiB text values; their
/// records, LZ4-compressed, are smaller on the wire than redis-benchmark's
/// 1 KiB of `x`, so the client figures are measured with raw 1 KiB values as well.
struct RedisTierWorkloads: Sendable {
    let context: BenchContextBox
    let cluster: BenchCluster
    let tasks: Int
    let threadCounts: [Int]
    /// Whether the tiered caches track invalidations (each own write then costs a check against Redis).
    let tracking: Bool
    /// Where the run's tasks run (`--redis-executor`).
    let executor: RedisTierOptions.Executor

    init(context: BenchContext, cluster: BenchCluster, tasks: Int, threadCounts: [Int], tracking: Bool, executor: RedisTierOptions.Executor) {
        self.context = BenchContextBox(context)
        self.executor = executor
        self.cluster = cluster
        self.tasks = max(tasks, 1)
        self.threadCounts = threadCounts
        self.tracking = tracking
    }

    static let setFloor = "redis-benchmark SET -P 16"
    static let getFloor = "redis-benchmark GET -P 16"
    static let roundTripFloor = "redis-benchmark GET -c 1 -P 1"

    /// The floors of one run: -P 16 throughput of SET and GET, and -c 1 -P 1 round trip of GET.
    struct Floors {
        var sets: Double
        var gets: Double
        var roundTripMicroseconds: Double
    }

    /// Requests of each floor's test. `redis-benchmark --cluster` runs a
    /// thread per node, and each stops at the first of its 250 ms ticks after
    /// its last reply, so the time it reports is rounded up to the next
    /// quarter second: 200,000 SETs reported as 265 k/s one run and 398 k/s
    /// the next. These counts keep each test near 5 s at this machine's
    /// speeds (about 400 k/s pipelined, 8 k/s one at a time), the rounding
    /// within 5 %.
    static let throughputFloorRequests = 2_000_000
    static let roundTripFloorRequests = 40_000

    func floors(valueBytes: Int) throws -> Floors {
        let throughput = try cluster.redisBenchmark(["-t", "set,get", "-n", String(Self.throughputFloorRequests), "-d", String(valueBytes), "-P", "16", "-r", "100000"])
        let roundTrip = try cluster.redisBenchmark(["-t", "get", "-n", String(Self.roundTripFloorRequests), "-d", String(valueBytes), "-c", "1", "-P", "1", "-r", "100000"])
        guard let sets = throughput["SET"], let gets = throughput["GET"], let trip = roundTrip["GET"] else {
            throw BenchClusterError("redis-benchmark printed no SET/GET rows")
        }
        return Floors(sets: sets.requestsPerSecond, gets: gets.requestsPerSecond, roundTripMicroseconds: trip.p50Milliseconds * 1000)
    }

    func run(_ workloads: [WorkloadID]) async throws -> [WorkloadResult] {
        var results: [WorkloadResult] = []
        for workload in workloads {
            switch workload {
            case .w1: results.append(try await w1())
            case .w2: for threads in threadCounts { results.append(try await w2(threads: threads)) }
            case .w3: results.append(try await w3())
            case .w7: results.append(try await w7())
            default: break
            }
        }
        return results
    }

    private func client() -> RedisClusterClient {
        RedisClusterClient(configuration: RedisClusterConfiguration(seeds: cluster.seeds, connectionsPerNode: 2, tls: cluster.tls))
    }

    private func tieredCache(_ client: RedisClusterClient) async throws -> TieredCache {
        await TieredCache(local: try Kache(inMemory: Kache.Configuration(memoryBudget: 1 << 30)), client: client, configuration: TieredCacheConfiguration(tracksInvalidations: tracking))
    }

    private func result(_ workload: WorkloadID, threads: Int = 1, _ recorder: FigureRecorder, notes: [String]) -> WorkloadResult {
        let variant = (cluster.tls == nil ? "tier redis" : "tier redis tls") + (executor == .nio ? ", NIO's loops as the global executor" : "")
        return WorkloadResult(workload: workload, variant: variant, durability: .memory, threads: threads, memoryBudget: 1 << 30,
                              figures: recorder.figures, notes: notes)
    }

    // MARK: - W1: sets through the tiered cache, and the client's raw pipelined SETs

    func w1() async throws -> WorkloadResult {
        let inputs = context.value.inputs
        let keys = inputs.loadKeys, values = inputs.loadValues, ttl = inputs.ttl
        var recorder = FigureRecorder()
        for run in 1...context.value.runs {
            context.value.progress.begin("W1 load · tier redis · run \(run)/\(context.value.runs)", total: keys.count * 2, unit: "sets")
            let client = client()
            let cache = try await tieredCache(client)
            _ = try await client.send(RedisCommand(["FLUSHALL"], keyIndex: nil))
            let tiered = try await timedConcurrently(count: keys.count) { index in
                try await cache.set(values[index], forKey: keys[index], ttl: ttl)
            }
            // The floor's SETs (-r 100000) mostly replace values: 2,000,000 of
            // them over about 300,000 keys. So do the client's: an untimed
            // pass inserts the keys, then each variant replaces their values
            // (a replace costs the server less than an insert, the same for both).
            let rawKeys = keys.map { "raw:" + $0 }
            let setCommand: @Sendable (Int) -> RedisCommand = { index in
                RedisCommand(["SET", RESPArgument(rawKeys[index]), RESPArgument(values[index])], keyIndex: 1)
            }
            _ = try await pipelined(client, count: keys.count, setCommand)
            let raw = try await pipelined(client, count: keys.count, setCommand)
            let rawOnLoops = try await pipelined(client, count: keys.count, onEventLoops: true, setCommand)
            context.value.progress.end()
            let floors = try floors(valueBytes: context.value.sizes.textValueBytes)
            recorder.record("tiered sets/s", Double(keys.count) / tiered, unit: .perSecond)
            recorder.compare("tiered sets/s", with: Self.setFloor, floors.sets)
            recorder.record("client SET/s, pipelined", Double(keys.count) / raw, unit: .perSecond)
            recorder.compare("client SET/s, pipelined", with: Self.setFloor, floors.sets)
            recorder.record("client SET/s, pipelined, on its event loops", Double(keys.count) / rawOnLoops, unit: .perSecond)
            recorder.compare("client SET/s, pipelined, on its event loops", with: Self.setFloor, floors.sets)
            recorder.record("shared-tier write errors", Double(cache.statistics.writeErrors), unit: .count, higherIsBetter: false)
            await cache.close()
            await client.shutdown()
        }
        return result(.w1, recorder, notes: [
            "tiered: \(tasks) tasks each awaiting its set (local tier in memory, then SET key record PXAT); client: batches of 16 SETs of the raw 1 KiB values, \(tasks) in flight, each variant replacing the values of keys an untimed pass inserted (as the floor's SETs mostly replace)",
            "on its event loops: the same tasks, each in client.withEventLoopAffinity (run on the loops that hold the client's connections)",
            "floors: redis-benchmark --cluster\(cluster.tls == nil ? "" : " --tls") -t set,get -n \(Self.throughputFloorRequests) -d \(context.value.sizes.textValueBytes) -P 16 (50 clients), and -t get -n \(Self.roundTripFloorRequests) -c 1 -P 1, on the same cluster, in the same run",
        ])
    }

    // MARK: - W2: local hits with the tier configured; the client's pipelined GETs and one client's round trip

    func w2(threads: Int) async throws -> WorkloadResult {
        let inputs = context.value.inputs
        let keys = inputs.readKeys(threads: threads)
        let total = keys.reduce(0) { $0 + $1.count }
        let loadKeys = inputs.loadKeys, values = inputs.loadValues, ttl = inputs.ttl
        var recorder = FigureRecorder()
        for run in 1...context.value.runs {
            context.value.progress.begin("W2 read-hot · tier redis · \(threads) threads · run \(run)/\(context.value.runs)", total: total, unit: "gets")
            let client = client()
            let cache = try await tieredCache(client)
            _ = try await timedConcurrently(count: loadKeys.count) { index in try await cache.set(values[index], forKey: loadKeys[index], ttl: ttl) }
            // Own writes come back as invalidations and are checked against Redis; let them settle.
            try await Task.sleep(for: .milliseconds(300))
            let (hits, seconds) = try await localReads(cache, keys: keys)
            recorder.record("tiered gets/s (local hits)", Double(total) / seconds, unit: .perSecond)
            recorder.record("hit ratio", Double(hits) / Double(total), unit: .ratio)
            let floor = Baselines.loadedDictionary(keys: loadKeys, values: values)
            let floorReads = try TargetLoops.reads(floor, keys: keys, progress: context.value.progress)
            recorder.compare("tiered gets/s (local hits)", with: Baselines.dictionary, Double(total) / floorReads.seconds)

            // Every get misses the local tier and asks Redis (records LZ4-decoded, local tier filled).
            let sharedKeys = Array(keys.joined().prefix(min(total, 100_000)))
            await cache.local.removeAll()
            let shared = try await timedConcurrently(count: sharedKeys.count) { index in
                await cache.local.removeValue(forKey: sharedKeys[index])
                _ = await cache.data(forKey: sharedKeys[index])
            }
            // The floor GETs values of 1 KiB; the tier's records of the same
            // values are LZ4-compressed and shorter. So the client's GETs read
            // the raw values, written untimed under keys of their own.
            let rawKeys = sharedKeys.map { "raw:" + $0 }
            _ = try await pipelined(client, count: rawKeys.count) { index in
                RedisCommand(["SET", RESPArgument(rawKeys[index]), RESPArgument(values[index % values.count])], keyIndex: 1)
            }
            let getCommand: @Sendable (Int) -> RedisCommand = { index in
                RedisCommand(["GET", RESPArgument(rawKeys[index])], keyIndex: 1)
            }
            let raw = try await pipelined(client, count: sharedKeys.count, getCommand)
            let rawOnLoops = try await pipelined(client, count: sharedKeys.count, onEventLoops: true, getCommand)
            let roundTripKeys = Array(rawKeys.prefix(20_000))
            let roundTrip = try await roundTrips(client, keys: roundTripKeys)
            let roundTripOnLoop = try await client.withEventLoopAffinity { try await roundTrips(client, keys: roundTripKeys) }
            context.value.progress.end()
            let floors = try floors(valueBytes: context.value.sizes.textValueBytes)
            recorder.record("tiered gets/s from Redis", Double(sharedKeys.count) / shared, unit: .perSecond)
            recorder.compare("tiered gets/s from Redis", with: Self.getFloor, floors.gets)
            recorder.record("client GET/s, pipelined", Double(sharedKeys.count) / raw, unit: .perSecond)
            recorder.compare("client GET/s, pipelined", with: Self.getFloor, floors.gets)
            recorder.record("client round trip p50 µs", roundTrip.microseconds(atPercentile: 50), unit: .microseconds, higherIsBetter: false)
            recorder.compare("client round trip p50 µs", with: Self.roundTripFloor, floors.roundTripMicroseconds)
            recorder.record("client round trip p99 µs", roundTrip.microseconds(atPercentile: 99), unit: .microseconds, higherIsBetter: false)
            recorder.record("client GET/s, pipelined, on its event loops", Double(sharedKeys.count) / rawOnLoops, unit: .perSecond)
            recorder.compare("client GET/s, pipelined, on its event loops", with: Self.getFloor, floors.gets)
            recorder.record("client round trip p50 µs, on its event loop", roundTripOnLoop.microseconds(atPercentile: 50), unit: .microseconds, higherIsBetter: false)
            recorder.compare("client round trip p50 µs, on its event loop", with: Self.roundTripFloor, floors.roundTripMicroseconds)
            recorder.record("client round trip p99 µs, on its event loop", roundTripOnLoop.microseconds(atPercentile: 99), unit: .microseconds, higherIsBetter: false)
            await cache.close()
            await client.shutdown()
        }
        return result(.w2, threads: threads, recorder, notes: [
            "local hits: \(threads) task(s) reading through TieredCache.data(forKey:); floor: the Mutex dictionary on \(threads) thread(s)",
            "from Redis: the local tier emptied before each get, \(tasks) tasks; client: pipelined GETs of raw 1 KiB values (written untimed under keys of their own, as the floor reads 1 KiB values); round trip: one task, one GET at a time of those",
            "on its event loop(s): the tasks run in client.withEventLoopAffinity, on the loops that hold the client's connections",
        ])
    }

    // MARK: - W3: 90 % gets, 10 % sets through the tiered cache

    func w3() async throws -> WorkloadResult {
        let inputs = context.value.inputs
        let operations = inputs.mixedOperations(threads: 1)[0]
        let loadKeys = inputs.loadKeys, values = inputs.loadValues, ttl = inputs.ttl
        var recorder = FigureRecorder()
        for run in 1...context.value.runs {
            context.value.progress.begin("W3 mixed · tier redis · run \(run)/\(context.value.runs)", total: operations.count, unit: "ops")
            let client = client()
            let cache = try await tieredCache(client)
            _ = try await timedConcurrently(count: loadKeys.count) { index in try await cache.set(values[index], forKey: loadKeys[index], ttl: ttl) }
            try await Task.sleep(for: .milliseconds(300))
            let seconds = try await timedConcurrently(count: operations.count) { index in
                switch operations[index] {
                case let .get(key): _ = await cache.data(forKey: key)
                case let .set(key, value): try await cache.set(value, forKey: key, ttl: ttl)
                }
            }
            context.value.progress.end()
            let floor = Baselines.loadedDictionary(keys: loadKeys, values: values)
            let floorPass = try TargetLoops.mixed(floor, operations: [operations], ttl: ttl, progress: context.value.progress)
            recorder.record("tiered ops/s", Double(operations.count) / seconds, unit: .perSecond)
            recorder.compare("tiered ops/s", with: Baselines.dictionary, Double(operations.count) / floorPass.seconds)
            let statistics = cache.statistics
            recorder.record("local hit ratio", Double(statistics.localHits) / Double(max(statistics.localHits + statistics.sharedHits + statistics.misses, 1)), unit: .ratio)
            recorder.record("shared-tier errors", Double(statistics.readErrors + statistics.writeErrors), unit: .count, higherIsBetter: false)
            await cache.close()
            await client.shutdown()
        }
        return result(.w3, recorder, notes: ["\(tasks) tasks; each set writes both tiers, and other keys' gets are local hits"])
    }

    // MARK: - W7: a Queue in Redis

    func w7() async throws -> WorkloadResult {
        let values = context.value.inputs.queueValues()
        let pushes = min(values.count, 200_000)
        let capacity = context.value.sizes.queueCapacity
        let ttl = context.value.inputs.ttl
        var recorder = FigureRecorder()
        for run in 1...context.value.runs {
            context.value.progress.begin("W7 queue · tier redis · run \(run)/\(context.value.runs)", total: pushes, unit: "pushes")
            let client = client()
            let cache = try await tieredCache(client)
            let queue = try cache.queue(named: "w7-queue", capacity: capacity)
            try await queue.removeAll()
            let popped = SharedCounter()
            let seconds = try await timedConcurrently(count: pushes) { index in
                try await queue.push(values[index], ttl: ttl)
                if index & 1 == 1, try await queue.pop() != nil { popped.increment() }
            }
            context.value.progress.end()
            recorder.record("ops/s", Double(pushes + pushes / 2) / seconds, unit: .perSecond)
            recorder.record("items popped", Double(popped.value), unit: .count)
            recorder.record("items left", Double(try await queue.count()), unit: .count)
            await cache.close()
            await client.shutdown()
        }
        return result(.w7, recorder, notes: [
            "\(pushes) pushes (a Lua script each) and a pop after every second, \(tasks) tasks, one Queue (one node); capacity \(capacity); no floor",
        ])
    }

    // MARK: - Loops

    /// Runs `body(i)` for i in 0..<count on ``tasks`` concurrent tasks, each
    /// on one of `loopsOf`'s event loops when given; returns the seconds.
    private func timedConcurrently(count: Int, onEventLoopsOf loopsOf: RedisClusterClient? = nil,
                                   _ body: @escaping @Sendable (Int) async throws -> Void) async throws -> Double {
        let next = SharedCounter()
        let box = context
        let start = MonotonicClock.now()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<tasks {
                group.addTask {
                    func loop() async throws {
                        while true {
                            let index = next.increment()
                            guard index < count else { return }
                            try await body(index)
                            if index & (ProgressLine.stride - 1) == ProgressLine.stride - 1 { box.value.progress.advance(by: ProgressLine.stride) }
                        }
                    }
                    if let loopsOf { try await loopsOf.withEventLoopAffinity { try await loop() } } else { try await loop() }
                }
            }
            try await group.waitForAll()
        }
        return MonotonicClock.seconds(from: start, to: MonotonicClock.now())
    }

    /// Sends `count` commands in batches of 16 through `client.pipeline`, ``tasks`` batches in flight.
    private func pipelined(_ client: RedisClusterClient, count: Int, onEventLoops: Bool = false,
                           _ command: @escaping @Sendable (Int) -> RedisCommand) async throws -> Double {
        let batches = (count + 15) / 16
        let failures = SharedCounter()
        let seconds = try await timedConcurrently(count: batches, onEventLoopsOf: onEventLoops ? client : nil) { batch in
            let commands = (batch * 16..<min(batch * 16 + 16, count)).map(command)
            for reply in await client.pipeline(commands) {
                if case .failure = reply { failures.increment() }
            }
        }
        if failures.value > 0 { throw BenchClusterError("\(failures.value) pipelined commands failed") }
        return seconds
    }

    /// One task, one GET at a time: the latency of each.
    private func roundTrips(_ client: RedisClusterClient, keys: [String]) async throws -> LatencyRecorder {
        var recorder = LatencyRecorder()
        for key in keys {
            let start = MonotonicClock.now()
            _ = try await client.send(RedisCommand(["GET", RESPArgument(key)], keyIndex: 1))
            recorder.record(MonotonicClock.now() - start)
        }
        return recorder
    }

    /// Local hits: each of `keys`' lists read through the tiered cache by its own task.
    private func localReads(_ cache: TieredCache, keys: [[String]]) async throws -> (hits: Int, seconds: Double) {
        let start = MonotonicClock.now()
        let hits = await withTaskGroup(of: Int.self) { group in
            for list in keys {
                group.addTask {
                    var hits = 0
                    for key in list where await cache.data(forKey: key) != nil { hits += 1 }
                    return hits
                }
            }
            return await group.reduce(0, +)
        }
        return (hits, MonotonicClock.seconds(from: start, to: MonotonicClock.now()))
    }
}

/// The bench context, handed to the tasks of a run. Its parts are read-only
/// while the workloads run, except the progress line, which locks itself.
struct BenchContextBox: @unchecked Sendable {
    let value: BenchContext
    init(_ value: BenchContext) { self.value = value }
}

/// A count shared by the tasks of a loop.
final class SharedCounter: Sendable {
    private let count = Atomic<Int>(0)
    /// Adds one; returns the count before.
    @discardableResult
    func increment() -> Int { count.add(1, ordering: .relaxed).oldValue }
    /// The count now.
    var value: Int { count.load(ordering: .relaxed) }
}
