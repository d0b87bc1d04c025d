// swift-tools-version:6.1
import PackageDescription

// An app with Keyhaven's `Security` product and a dependency (Guarded, standing in for Alamofire)
// that guards keychain code with `#if canImport(Security)` and does not depend on Keyhaven. SwiftPM
// puts every built module on every target's search path, so Guarded sees `Security` once it is
// built: its `import Security` must compile without Keyhaven's C modules (docs/porting.md).
// swift-certificates guards its SecCertificate conversions the same way: the app links it too, and
// the script builds it again once `Security` exists. Built clean, then again after Guarded's and
// X509's sources change, by .ci/run (scripts/fixture-can-import.sh).
let package = Package(
    name: "CanImportSecurity",
    dependencies: [
        .package(name: "keyhaven", path: "../.."),
        .package(path: "Guarded"),
        .package(url: "https://github.com/apple/swift-certificates.git", from: "1.21.1"),
    ],
    targets: [
        .executableTarget(
            name: "App",
            dependencies: [.product(name: "Security", package: "keyhaven"), .product(name: "Guarded", package: "Guarded"),
                           .product(name: "X509", package: "swift-certificates")],
            swiftSettings: [.swiftLanguageMode(.v6)]
        )
    ]
)
