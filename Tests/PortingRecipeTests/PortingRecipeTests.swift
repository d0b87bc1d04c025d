import Foundation
import KeychainTestSupport
import Testing

/// docs/porting.md's recipe, checked: the manifest names the same products on every platform, and
/// a target with one `@_exported import Security` file builds wrapper-style code unchanged.
@Suite(.freshKeychain())
struct PortingRecipeTests {
    @Test("Wrapper-style code that imports only Foundation stores, reads, updates and removes")
    func wrapperStyleCode() throws {
        let store = TokenStore(service: "com.example.porting")
        #expect(try store.token(for: "alice") == nil)
        try store.set("first", for: "alice")
        try store.set("second", for: "alice")
        try store.set("other", for: "bob")
        #expect(try store.token(for: "alice") == "second")
        try store.removeAll()
        #expect(try store.token(for: "bob") == nil)
    }

    /// The manifest as `swift package dump-package` reads it, on the Linux branch or the Apple one.
    static func manifest(apple: Bool) throws -> [String: Any] {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let scratch = try TemporaryFolder.make(prefix: "keyhaven-manifest")
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "package", "dump-package", "--package-path", root.path, "--scratch-path", scratch]
        var environment = ProcessInfo.processInfo.environment
        environment["KEYHAVEN_MANIFEST_PLATFORM"] = apple ? "apple" : nil
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        return try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    }

    static func products(_ manifest: [String: Any]) -> [String: [String]] {
        var result: [String: [String]] = [:]
        for product in manifest["products"] as? [[String: Any]] ?? [] {
            if let name = product["name"] as? String { result[name] = product["targets"] as? [String] ?? [] }
        }
        return result
    }

    @Test("Every library product is declared on every platform with the same name; on Apple platforms none of the engine is built")
    func productsOnEveryPlatform() throws {
        let linux = try Self.manifest(apple: false), apple = try Self.manifest(apple: true)
        let (linuxProducts, appleProducts) = (Self.products(linux), Self.products(apple))
        #expect(Set(linuxProducts.keys) == ["KeychainServices", "KeychainServicesExtras", "Keyhaven", "Security", "keyhaven-example",
                                            "keyhaven-sync-server"])
        // The sync server is the one Linux-only product: an executable (a server for Linux machines'
        // keychains), which no package links against.
        #expect(Set(appleProducts.keys) == Set(linuxProducts.keys).subtracting(["keyhaven-sync-server"]))
        // On Apple platforms `Security` is Apple's: the product is KeychainServices, which re-exports it.
        #expect(appleProducts["Security"] == ["KeychainServices"])
        #expect(linuxProducts["Security"] == ["Security"])
        let appleTargets = (apple["targets"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(Set(appleTargets) == ["KeychainServices", "KeychainServicesExtras", "Keyhaven", "keyhaven-example"])
        #expect((apple["dependencies"] as? [Any])?.isEmpty == true)
    }
}
