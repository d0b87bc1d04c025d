import Foundation
import KeychainServices

/// Keychain homes holding a given number of items, built once and kept between runs (in
/// `$KEYHAVEN_BENCH_FIXTURES`, else `.fixtures` in the working folder), since adding 100,000
/// items takes minutes. Never the user's keychain: `KEYHAVEN_HOME` is set to the fixture.
public enum Fixture {
    public static let service = "bench"
    public static let secret = Data(repeating: 0x5A, count: 32)

    /// The item counts measured: 1,000 and 10,000, and 100,000 unless `KEYHAVEN_BENCH_QUICK` is set.
    public static var sizes: [Int] { ProcessInfo.processInfo.environment["KEYHAVEN_BENCH_QUICK"] == nil ? [1_000, 10_000, 100_000] : [1_000, 10_000] }

    public static var folder: String {
        ProcessInfo.processInfo.environment["KEYHAVEN_BENCH_FIXTURES"]
            ?? FileManager.default.currentDirectoryPath + "/.fixtures"
    }

    public static func account(_ index: Int) -> String { "account-\(index)" }

    public static func query(_ account: String) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    /// Items benchmarks add beyond the fixture's: another service, removed by ``removeAdded()``.
    public static func extraQuery(_ account: String) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service + "-added", kSecAttrAccount as String: account]
    }

    public static func addExtra(_ account: String) -> OSStatus {
        var item = extraQuery(account)
        item[kSecValueData as String] = secret
        return SecItemAdd(item as CFDictionary, nil)
    }

    public static func removeAdded() {
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service + "-added"]
        _ = SecItemDelete(query as CFDictionary)
    }

    /// Points this process at the home with `items` items, building it if needed.
    public static func use(items: Int) throws {
        let home = folder + "/items-\(items)"
        let marker = home + "/complete"
        setenv("KEYHAVEN_AGENT", "off", 1)
        setenv("KEYHAVEN_HOME", home, 1)
        if FileManager.default.fileExists(atPath: marker) {
            // A fixture's home has no preferences: its one keychain is the whole search list.
            try? FileManager.default.removeItem(atPath: home + "/preferences.json")
            return
        }
        try? FileManager.default.removeItem(atPath: home)
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        for index in 0..<items {
            var item = query(account(index))
            item[kSecValueData as String] = secret
            let status = SecItemAdd(item as CFDictionary, nil)
            guard status == errSecSuccess else { throw FixtureError(status: status) }
        }
        _ = FileManager.default.createFile(atPath: marker, contents: Data("\(items)\n".utf8))
    }

    public struct FixtureError: Error, CustomStringConvertible {
        public let status: OSStatus
        public init(status: OSStatus) { self.status = status }
        public var description: String { "building the fixture failed with OSStatus \(status)" }
    }
}

/// The measured operations, shared by the benchmarks and `bench-instructions`.
public enum Lookup {
    /// `SecItemCopyMatching` of one item by service and account, returning its data, as a
    /// program calls it: the query built as a Swift dictionary and bridged.
    public static func copyMatching(_ account: String) -> CFTypeRef? {
        var query = Fixture.query(account)
        query[kSecReturnData as String] = true
        var result: CFTypeRef?
        precondition(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        return result
    }
}
