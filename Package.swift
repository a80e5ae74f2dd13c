// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Kache",
    platforms: [.macOS(.v15)],
    products: [
        .library(name: "Kache", targets: ["Kache"]),
    ],
    dependencies: [
        .package(url: "https://github.com/apple/swift-collections", from: "1.6.0"),
        .package(url: "https://github.com/apple/swift-system", from: "1.8.1"),
        .package(url: "https://github.com/apple/swift-log", from: "1.16.2"),
    ],
    targets: [
        // The system LZ4 library, found through pkg-config (Debian: liblz4-dev).
        .systemLibrary(
            name: "CLZ4",
            pkgConfig: "liblz4",
            providers: [.apt(["liblz4-dev"]), .brew(["lz4"])]
        ),
        // syncfs(2), which Swift's Glibc module does not export.
        .target(name: "CKacheSystem"),
        .target(
            name: "Kache",
            dependencies: [
                "CLZ4",
                "CKacheSystem",
                .product(name: "HeapModule", package: "swift-collections"),
                .product(name: "DequeModule", package: "swift-collections"),
                .product(name: "SystemPackage", package: "swift-system"),
                .product(name: "Logging", package: "swift-log"),
            ]
        ),
        // Deterministic generators and baselines of shared/bench/WORKLOADS.md.
        .target(
            name: "KacheWorkloads",
            dependencies: ["CLZ4"]
        ),
        .testTarget(name: "KacheTests", dependencies: ["Kache"]),
        .testTarget(name: "KacheWorkloadsTests", dependencies: ["KacheWorkloads"]),
    ],
    swiftLanguageModes: [.v6]
)
