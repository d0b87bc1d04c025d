// swift-tools-version:6.1
import PackageDescription

// A library that knows nothing of Keyhaven: keychain code behind `#if canImport(Security)`, a file
// elsewhere, as token stores and HTTP clients write it.
let package = Package(
    name: "Guarded",
    products: [.library(name: "Guarded", targets: ["Guarded"])],
    targets: [.target(name: "Guarded", swiftSettings: [.swiftLanguageMode(.v6)])]
)
