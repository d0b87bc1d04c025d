import Foundation
import KeychainTestSupport
import Testing

/// Keyhaven's public modules as a target that does not depend on Keyhaven sees them. SwiftPM puts
/// every built module on every target's search path, but gives a C module's map only to the
/// targets that depend on it; so a library that guards keychain code with `#if canImport(Security)`
/// compiles `import Security` whenever `Security` happens to be built first, and must find all it
/// needs in the modules folder (docs/porting.md, "canImport(Security) in your dependencies"). Here
/// the compiler is given that folder and nothing else; scripts/fixture-can-import.sh builds a whole
/// package that way in CI.
@Suite struct ModuleInterfaceTests {
    static let sources: [(module: String, code: String)] = [
        ("Security", """
            import Foundation
            import Security
            public func store(_ token: String) -> OSStatus {
                let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "guarded",
                                            kSecValueData as String: Data(token.utf8)]
                return SecItemAdd(query as CFDictionary, nil)
            }
            """),
        ("KeychainServices", """
            import KeychainServices
            public func read() -> OSStatus { SecItemCopyMatching([kSecClass: kSecClassGenericPassword] as CFDictionary, nil) }
            """),
        ("KeychainServicesExtras", """
            import KeychainServices
            import KeychainServicesExtras
            public func groups() -> CFArray { SecAccessGroupsGetCurrent() }
            """),
        ("Keyhaven", """
            import Keyhaven
            public func keychain() -> Keychain { Keychain(service: "guarded") }
            """),
    ]

    /// The toolchain's `swiftc`, from the PATH `swift test` runs with.
    static var compiler: String? {
        (ProcessInfo.processInfo.environment["PATH"] ?? "").split(separator: ":").map { $0 + "/swiftc" }
            .first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    @Test("import Security, KeychainServices, KeychainServicesExtras and Keyhaven compile with the modules folder alone: no C module of Keyhaven's is needed", arguments: 0..<4)
    func withoutModuleMaps(_ index: Int) throws {
        let compiler = try #require(Self.compiler, "swiftc is on the PATH swift test runs with")
        let (module, code) = Self.sources[index]
        let folder = try TemporaryFolder.make(prefix: "keyhaven-interface")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try code.write(toFile: folder + "/Guarded.swift", atomically: true, encoding: .utf8)
        let modules = CommandRunner.products.appendingPathComponent("Modules").path
        let result = try CommandRunner.execute(compiler, ["-typecheck", "-swift-version", "6", "-I", modules, folder + "/Guarded.swift"],
                                               environment: ProcessInfo.processInfo.environment)
        #expect(result.status == 0, "import \(module): \(result.output)\(result.error)")
    }
}
