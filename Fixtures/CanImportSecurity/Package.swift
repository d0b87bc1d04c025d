// swift-tools-version:6.1
import PackageDescription

// An app with Keyhaven's `Security` product and a dependency (Guarded, standing in for Alamofire)
// that guards keychain code with `#if canImport(Security)` and does not depend on Keyhaven. SwiftPM
// puts every built module on every target's search path, so Guarded sees `Security` once it is
// built: its `import Security` must compile without Keyhaven's C modules (docs/porting.md).
// Built clean, then again after Guarded's sources change, by .ci/run.
let package = Package(
    name: "CanImportSecurity",
    dependencies: [
        .package(name: "keyhaven", path: "../.."),
        .package(path: "Guarded"),
    ],
    targets: [
        .executableTarget(
            name: "App",
            dependencies: [.product(name: "Security", package: "keyhaven"), .product(name: "Guarded", package: "Guarded")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    ]
)
