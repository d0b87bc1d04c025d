import Foundation
import KeychainServices

/// Keychain homes holding a given number of generic passwords (`items-N`: service `bench`,
/// accounts `account-I`, 32-byte secrets), built once and kept between runs, since adding 100,000
/// items takes minutes. Never the user's keychain: `KEYHAVEN_HOME` is set to the fixture.
///
/// The one fixture of every benchmark: the Benchmarks package's and `keyhaven-agent-bench`, which
/// compiles this file through a link (it needs the main package's internal modules, so it cannot
/// live in this package). Its items are open to every program: each build of a benchmark is
/// another program to the agent, and must read them without a prompt.
public enum Fixture {
    public static let service = "bench"
    /// The service of the items benchmarks add beyond the fixture's, removed by ``removeAdded()``.
    public static let addedService = "bench-added"
    public static let secret = Data(repeating: 0x5A, count: 32)

    /// The item counts measured: 1,000 and 10,000, and 100,000 unless `KEYHAVEN_BENCH_QUICK` is set.
    public static var sizes: [Int] { ProcessInfo.processInfo.environment["KEYHAVEN_BENCH_QUICK"] == nil ? [1_000, 10_000, 100_000] : [1_000, 10_000] }

    /// Where the homes are kept: `$KEYHAVEN_BENCH_FIXTURES`, else `.fixtures` in the working folder.
    public static var folder: String {
        ProcessInfo.processInfo.environment["KEYHAVEN_BENCH_FIXTURES"]
            ?? FileManager.default.currentDirectoryPath + "/.fixtures"
    }

    public static func account(_ index: Int) -> String { "account-\(index)" }

    public static func query(_ account: String, service: String = service) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    public static func extraQuery(_ account: String) -> [String: Any] { query(account, service: addedService) }

    /// Adds one item of ``addedService``.
    public static func addExtra(_ account: String) -> OSStatus {
        var item = extraQuery(account)
        item[kSecValueData as String] = secret
        return SecItemAdd(item as CFDictionary, nil)
    }

    public static func removeAdded() {
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: addedService]
        _ = SecItemDelete(query as CFDictionary)
    }

    /// Points this process at the home with `items` items under `folder`, in process, building it
    /// if needed, and returns the home. The items earlier runs added are removed, unless `keepingAdded`.
    @discardableResult
    public static func use(items: Int, folder: String = folder, keepingAdded: Bool = false) throws -> String {
        let home = folder + "/items-\(items)"
        let marker = home + "/complete"
        setenv("KEYHAVEN_AGENT", "off", 1)
        setenv("KEYHAVEN_HOME", home, 1)
        if FileManager.default.fileExists(atPath: marker) {
            // A fixture's home has no preferences: its one keychain is the whole search list.
            try? FileManager.default.removeItem(atPath: home + "/preferences.json")
            if !keepingAdded { removeAdded() }
            return home
        }
        try? FileManager.default.removeItem(atPath: home)
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true,
                                                attributes: [.posixPermissions: 0o700])
        FileHandle.standardError.write(Data("building a keychain of \(items) items in \(home)\n".utf8))
        let open = try anyProgram()
        for index in 0..<items {
            var item = query(account(index))
            item[kSecValueData as String] = secret
            item[kSecAttrAccess as String] = open
            let status = SecItemAdd(item as CFDictionary, nil)
            guard status == errSecSuccess else { throw FixtureError(status: status) }
        }
        _ = FileManager.default.createFile(atPath: marker, contents: Data("\(items)\n".utf8))
        return home
    }

    /// An access object that lets every program use the item.
    static func anyProgram() throws -> SecAccess {
        var access: SecAccess?
        var status = SecAccessCreate("keyhaven benchmarks" as CFString, nil, &access)
        guard status == errSecSuccess, let access else { throw FixtureError(status: status) }
        var acls: CFArray?
        status = SecAccessCopyACLList(access, &acls)
        guard status == errSecSuccess else { throw FixtureError(status: status) }
        for acl in (acls as? [SecACL]) ?? [] {
            status = SecACLSetContents(acl, nil, "keyhaven benchmarks" as CFString, [])
            guard status == errSecSuccess else { throw FixtureError(status: status) }
        }
        return access
    }

    public struct FixtureError: Error, CustomStringConvertible {
        public let status: OSStatus
        public init(status: OSStatus) { self.status = status }
        public var description: String { "building the fixture failed with OSStatus \(status)" }
    }
}
