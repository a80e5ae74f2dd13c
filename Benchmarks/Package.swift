// swift-tools-version: 6.1
import PackageDescription

// The micro-benchmarks of Kache (ordo-one/benchmark), a package of their own so
// that the main package's build and tests never fetch or compile the harness.
//
//     cd Benchmarks && swift package benchmark
let package = Package(
    name: "KacheBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: "Kache", path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
    ],
    targets: [
        .executableTarget(
            name: "KacheBenchmarks",
            dependencies: [
                .product(name: "Kache", package: "Kache"),
                .product(name: "KacheWorkloads", package: "Kache"),
                .product(name: "Benchmark", package: "benchmark"),
            ],
            path: "KacheBenchmarks",
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ],
    swiftLanguageModes: [.v6]
)
