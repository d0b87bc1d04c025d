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
        // The fixtures (keychains of a given size), the floor, and the measured look-up, shared
        // by the benchmarks and bench-instructions.
        .target(
            name: "BenchmarkSupport",
            dependencies: [
                "CSQLiteFloor",
                .product(name: "Crypto", package: "swift-crypto"),
                .product(name: "KeychainServices", package: root),
            ],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        // Instructions per look-up, counted under callgrind (scripts/bench-instructions.sh).
        .executableTarget(
            name: "bench-instructions",
            dependencies: ["BenchmarkSupport"],
            swiftSettings: [.swiftLanguageMode(.v6)]
        ),
        .executableTarget(
            name: "SecItem",
            dependencies: [
                "BenchmarkSupport",
                .product(name: "Benchmark", package: "benchmark"),
                .product(name: "KeychainServices", package: root),
                .product(name: "Keyhaven", package: root),
                .product(name: "Crypto", package: "swift-crypto"),
            ],
            path: "Benchmarks/SecItem",
            swiftSettings: [.swiftLanguageMode(.v6)],
            plugins: [.plugin(name: "BenchmarkPlugin", package: "benchmark")]
        ),
    ]
)
