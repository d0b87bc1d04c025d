import Foundation
import KeychainServices

/// Keychain homes of a given number of generic passwords (`items-N`, service `bench`, accounts
/// `account-I`, 32-byte secrets), as the Benchmarks package's fixtures but open to every program:
/// each build of this program is another program to the agent, and must read them without a
/// prompt. Built once and kept (100,000 adds take a few minutes).
enum BenchFixture {
    static let service = "bench"
    static let addedService = "bench-added"
    static let secret = Data(repeating: 0x5A, count: 32)

    static func account(_ index: Int) -> String { "account-\(index)" }

    static func query(_ account: String, service: String = service) -> [String: Any] {
        [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: service, kSecAttrAccount as String: account]
    }

    /// The home with `items` items under `folder`, built if needed; this process now uses it, in
    /// process. The items earlier runs added are removed first, unless `keepingAdded`.
    static func use(folder: String, items: Int, keepingAdded: Bool = false) throws -> String {
        let home = folder + "/items-\(items)"
        let marker = home + "/complete"
        setenv("KEYHAVEN_AGENT", "off", 1)
        setenv("KEYHAVEN_HOME", home, 1)
        if FileManager.default.fileExists(atPath: marker) {
            try? FileManager.default.removeItem(atPath: home + "/preferences.json")
            if !keepingAdded { removeAdded() }
            return home
        }
        try? FileManager.default.removeItem(atPath: home)
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        FileHandle.standardError.write(Data("building a keychain of \(items) items in \(home)\n".utf8))
        let open = anyProgram()
        for index in 0..<items {
            var item = query(account(index))
            item[kSecValueData as String] = secret
            item[kSecAttrAccess as String] = open
            let status = SecItemAdd(item as CFDictionary, nil)
            guard status == errSecSuccess else { throw BenchFailure("building the fixture: SecItemAdd returned \(status)") }
        }
        _ = FileManager.default.createFile(atPath: marker, contents: Data("\(items)\n".utf8))
        return home
    }

    /// An access object that lets every program use the item.
    static func anyProgram() -> SecAccess {
        var access: SecAccess?
        guard SecAccessCreate("keyhaven-agent-bench" as CFString, nil, &access) == errSecSuccess, let access else {
            fail("SecAccessCreate failed")
        }
        var acls: CFArray?
        check(SecAccessCopyACLList(access, &acls), "SecAccessCopyACLList")
        for acl in (acls as? [SecACL]) ?? [] { check(SecACLSetContents(acl, nil, "keyhaven-agent-bench" as CFString, []), "SecACLSetContents") }
        return access
    }

    /// Removes the items the add benchmark made.
    static func removeAdded() {
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: addedService]
        _ = SecItemDelete(query as CFDictionary)
    }

    /// What a program does to read one password: the query built as a Swift dictionary, bridged.
    static func copyMatching(_ index: Int) {
        var query = query(account(index))
        query[kSecReturnData as String] = true
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        check(status, "SecItemCopyMatching")
    }

    /// One library call of `work`, given an item's index, by whichever route this process uses;
    /// nil for the echo, which is the agent's alone. An add's account is unique to this closure.
    static func call(for work: LoadRun.Work) -> ((Int) -> Void)? {
        switch work {
        case .copyMatching: return { copyMatching($0) }
        case .update: return { update($0, round: 1) }
        case .add:
            let run = UInt64.random(in: 0...UInt64.max)
            return { add("counted-\(run)-\($0)") }
        case .echo: return nil
        }
    }

    static func add(_ account: String) {
        var item = query(account, service: addedService)
        item[kSecValueData as String] = secret
        let status = SecItemAdd(item as CFDictionary, nil)
        check(status, "SecItemAdd")
    }

    static func update(_ index: Int, round: Int) {
        let changes = [kSecValueData as String: Data(repeating: UInt8(truncatingIfNeeded: round), count: 32)] as CFDictionary
        // Changes the data only: the item stays open to every program.
        let status = SecItemUpdate(query(account(index)) as CFDictionary, changes)
        check(status, "SecItemUpdate")
    }
}

/// Stops the run (and the agent it started) when a measured call fails: a failed call is not a sample.
func check(_ status: OSStatus, _ call: String) {
    guard status != errSecSuccess else { return }
    fail("\(call) returned \(status)")
}

func fail(_ message: String) -> Never {
    BenchAgent.current?.stop()
    FileHandle.standardError.write(Data("keyhaven-agent-bench: \(message)\n".utf8))
    exit(1)
}
