// swift-tools-version: 6.1
// Keyhaven's benchmarks (docs/benchmarks.md), apart from the main package so that its build and
// tests never need package-benchmark. Run: `swift package --disable-sandbox benchmark` here, or
// scripts/bench.sh from the repository's root.
import Foundation
import PackageDescription

// A path dependency is named after its folder, which is whatever the clone was called.
let root = URL(fileURLWithPath: Context.packageDirectory).deletingLastPathComponent().lastPathComponent.lowercased()

let package = Package(
    name: "KeyhavenBenchmarks",
    platforms: [.macOS(.v15)],
    dependencies: [
        .package(name: root, path: ".."),
        .package(url: "https://github.com/ordo-one/benchmark", from: "1.38.1", traits: ["MallocInterposer"]),
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
    ],
    targets: [
        // The floor's SQLite: the system library, as the keychain uses it.
        .systemLibrary(name: "CSQLiteFloor", pkgConfig: "sqlite3", providers: [.apt(["libsqlite3-dev"])]),
        .executableTarget(
            name: "SecItem",
            dependencies: [
                "CSQLiteFloor",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "KeychainServices", package: root),
                .product(name: "Keyhaven", package: root),
            ],
            path: "Benchmarks/SecItem",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
