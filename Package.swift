// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Kache",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Kache", targets: ["Kache"]),
        .library(name: "KacheHTTP", targets: ["KacheHTTP"]),
        // KacheHTTP's transport over AsyncHTTPClient, for servers and Linux; a product
        // of its own, so that URLSession users never build AsyncHTTPClient.
        .library(name: "KacheHTTPAsyncHTTPClient", targets: ["KacheHTTPAsyncHTTPClient"]),
        // The shared second tier on Redis Cluster, behind the local cache.
        .library(name: "KacheRedis", targets: ["KacheRedis"]),
        // A cache's statistics reported through swift-metrics (Prometheus, StatsD, OpenTelemetry…).
        .library(name: "KacheMetrics", targets: ["KacheMetrics"]),
        // KacheHTTP's and the Redis tier's statistics the same way, each a product of
        // its own on top of KacheMetrics, so that KacheHTTP users never build NIO.
        .library(name: "KacheHTTPMetrics", targets: ["KacheHTTPMetrics"]),
        .library(name: "KacheRedisMetrics", targets: ["KacheRedisMetrics"]),
        // A cache as a swift-service-lifecycle Service, saved and closed when its
        // ServiceGroup shuts down; products of their own, so that only their users
        // build ServiceLifecycle (and swift-async-algorithms under it).
        .library(name: "KacheServiceLifecycle", targets: ["KacheServiceLifecycle"]),
        .library(name: "KacheRedisServiceLifecycle", targets: ["KacheRedisServiceLifecycle"]),
        // The generators of WORKLOADS.md, for the micro-benchmarks in Benchmarks/ and for
        // running the same work against another cache.
        .library(name: "KacheWorkloads", targets: ["KacheWorkloads"]),
        .executable(name: "kache", targets: ["KacheCLI"]),
        .executable(name: "kache-bench", targets: ["KacheBench"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
        .package(url: "https://github.com/apple/swift-argument-parser", from: "1.8.2"),
        .package(url: "https://github.com/HdrHistogram/hdrhistogram-swift", from: "0.2.0"),
        .package(url: "https://github.com/apple/swift-nio", from: "2.101.2"),
        .package(url: "https://github.com/apple/swift-nio-ssl", from: "2.37.6"),
        .package(url: "https://github.com/apple/swift-http-structured-headers", from: "1.7.0"),
        .package(url: "https://github.com/apple/swift-metrics", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/async-http-client", from: "1.37.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle", from: "2.13.0"),
        // Only scripts/docs.sh uses it (`swift package generate-documentation`); no target links it.
        .package(url: "https://github.com/swiftlang/swift-docc-plugin", from: "1.5.0"),
    ],
    targets: [
        // The system LZ4 library, found through pkg-config (Debian: liblz4-dev).
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        // The peers kache-bench measures beside Kache on W1 and W8 (issue 32),
        // through their C APIs. Only KacheBench depends on them.
        .systemLibrary(
            name: "CRocksDB",
            pkgConfig: "rocksdb",
            providers: [.apt(["librocksdb-dev"]), .brew(["rocksdb"])]
        ),
        .systemLibrary(
            name: "CSQLite",
            pkgConfig: "sqlite3",
            providers: [.apt(["libsqlite3-dev"]), .brew(["sqlite"])]
        ),
        // syncfs(2), which Swift's Glibc module does not export.
        .target(name: "CKacheSystem"),
        // The index's key hash, in C so that debug builds run it at Hasher's speed (see the source).
        .target(name: "CSipHash"),
        // Where an entry's bytes live, below the engine: the record format
        // (LZ4, checksums) and the directory's pieces. It knows no Pools,
        // Queues, expiry policy or public API; a key-space kind is a byte to it.
        .target(
            name: "KacheStorage",
            dependencies: [
                "CLZ4", "CKacheSystem",
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .target(
            name: "Kache",
            dependencies: [
                "KacheStorage",
                "CKacheSystem",
                "CSipHash",
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // HTTP response caching for a URLSession-based client or a gateway.
        // Structured headers parse targeted fields such as CDN-Cache-Control (RFC 9213).
        .target(
            name: "KacheHTTP",
            dependencies: ["Kache", .product(name: "RawStructuredFieldValues", package: "swift-http-structured-headers")]
        ),
        // An HTTPTransport over AsyncHTTPClient (issue 34). Only this target imports it.
        .target(
            name: "KacheHTTPAsyncHTTPClient",
            dependencies: [
                "KacheHTTP",
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ]
        ),
        // A RESP3 Redis Cluster client on SwiftNIO, and the tiered cache built on it.
        // Kache itself stays free of NIO: only this target imports it.
        .target(
            name: "KacheRedis",
            dependencies: [
                // KacheStorage for `Locked`: a Mutex that ThreadSanitizer can see.
                "Kache", "KacheStorage",
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                // TLS to the nodes (RedisTLSConfiguration).
                .product(name: "NIOSSL", package: "swift-nio-ssl"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // A second process for KacheRedisTests: a tiered cache that sets and
        // removes keys on command, so invalidation is measured across processes.
        .executableTarget(name: "KacheRedisPeer", dependencies: ["KacheRedis", "Kache"]),
        // Deterministic generators and baselines of shared/bench/WORKLOADS.md.
        .target(
            name: "KacheWorkloads",
            dependencies: [
                "CLZ4", .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "HeapModule", package: "swift-collections"),
            ]
        ),
        // Reports a cache's Statistics through swift-metrics; only its users build swift-metrics.
        .target(
            name: "KacheMetrics",
            dependencies: ["Kache", .product(name: "CoreMetrics", package: "swift-metrics")]
        ),
        // A CachingClient's HTTPCacheStatistics through swift-metrics, with KacheMetrics' reporting.
        .target(
            name: "KacheHTTPMetrics",
            dependencies: ["KacheHTTP", "KacheMetrics", .product(name: "CoreMetrics", package: "swift-metrics")]
        ),
        // A TieredCache's and a RedisClusterClient's statistics through swift-metrics.
        .target(
            name: "KacheRedisMetrics",
            dependencies: ["KacheRedis", "KacheMetrics", .product(name: "CoreMetrics", package: "swift-metrics")]
        ),
        // KacheService: a Kache as a Service of a ServiceGroup.
        .target(
            name: "KacheServiceLifecycle",
            dependencies: ["Kache", .product(name: "ServiceLifecycle", package: "swift-service-lifecycle")]
        ),
        // TieredCacheService, apart from KacheRedis, so that KacheRedis users don't build ServiceLifecycle.
        .target(
            name: "KacheRedisServiceLifecycle",
            dependencies: [
                "KacheRedis", "KacheServiceLifecycle", "Kache",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            ]
        ),
        // A test fixture, not a tool: a ServiceGroup that sets keys until SIGTERM,
        // for KacheServiceLifecycleTests. No product names it, so users never see it.
        .executableTarget(
            name: "KacheLifecycleFixture",
            dependencies: [
                "Kache", "KacheServiceLifecycle",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .executableTarget(
            name: "KacheCLI",
            dependencies: ["Kache", .product(name: "ArgumentParser", package: "swift-argument-parser")]
        ),
        .executableTarget(
            name: "KacheBench",
            dependencies: [
                "Kache", "KacheStorage", "KacheWorkloads", "KacheRedis", "CRocksDB", "CSQLite",
                .product(name: "ArgumentParser", package: "swift-argument-parser"),
                .product(name: "Histogram", package: "hdrhistogram-swift"),
                // `--redis-executor nio` installs NIO's loops as Swift's global executor.
                .product(name: "NIOPosix", package: "swift-nio"),
            ]
        ),
        // Writes to a cache directory and journals each acknowledged operation,
        // for the SIGKILL crash tests and the cross-process tests.
        .executableTarget(name: "KacheCrashHarness", dependencies: ["Kache", "KacheWorkloads"]),
        // What several test targets share: how a test starts a child process, waits
        // for a state, and names the case of a KacheError it expects.
        .target(name: "KacheTestSupport", dependencies: ["Kache"], path: "Tests/KacheTestSupport"),
        // Fixtures: a directory of format version 2, which FormatVersion2Tests opens.
        .testTarget(name: "KacheTests", dependencies: ["Kache", "KacheStorage", "KacheTestSupport"], exclude: ["Fixtures"]),
        .testTarget(name: "KacheReliabilityTests", dependencies: ["Kache", "KacheStorage", "KacheCrashHarness", "KacheWorkloads", "KacheTestSupport"]),
        // Runs a representative set of its tests over both transports, so it builds AsyncHTTPClient.
        .testTarget(
            name: "KacheHTTPTests",
            dependencies: ["KacheHTTP", "KacheHTTPAsyncHTTPClient", "Kache", "KacheTestSupport"],
            exclude: ["Server"]
        ),
        .testTarget(
            name: "KacheRedisTests",
            dependencies: [
                "KacheRedis", "Kache", "KacheStorage", "KacheWorkloads", "KacheRedisPeer", "KacheTestSupport",
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(name: "KacheWorkloadsTests", dependencies: ["KacheWorkloads", "KacheTestSupport"], exclude: ["vectors.json"]),
        // Runs `kache-bench run --quick` end to end.
        // Fixtures: the JSON of two quick runs, which the chart tests draw.
        .testTarget(name: "KacheBenchTests", dependencies: ["KacheBench", "KacheStorage", "KacheWorkloads", "KacheTestSupport"], exclude: ["Fixtures"]),
        // Runs the built `kache` and `kache-bench` binaries against real directories.
        .testTarget(name: "KacheCLITests", dependencies: ["Kache", "KacheCLI", "KacheTestSupport"]),
        // Builds KacheLifecycleFixture, which its SIGTERM test runs; KacheStorage for DiskFaults.
        .testTarget(
            name: "KacheServiceLifecycleTests",
            dependencies: [
                "KacheServiceLifecycle", "KacheRedisServiceLifecycle", "KacheLifecycleFixture",
                "Kache", "KacheRedis", "KacheStorage", "KacheTestSupport",
                .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        .testTarget(
            name: "KacheMetricsTests",
            dependencies: ["KacheMetrics", "Kache", .product(name: "MetricsTestKit", package: "swift-metrics")]
        ),
        .testTarget(
            name: "KacheHTTPMetricsTests",
            dependencies: ["KacheHTTPMetrics", "KacheHTTP", "Kache", .product(name: "MetricsTestKit", package: "swift-metrics")]
        ),
        // Against a Redis tier nothing answers: the counters move without a cluster.
        .testTarget(
            name: "KacheRedisMetricsTests",
            dependencies: ["KacheRedisMetrics", "KacheRedis", "Kache", .product(name: "MetricsTestKit", package: "swift-metrics")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
