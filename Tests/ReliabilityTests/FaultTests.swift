#if DEBUG
import Foundation
import KeychainServices
import KeychainServicesExtras
import KeychainStore
import KeychainTestSupport
import Testing
@testable import keyhaven_test_helper

/// I/O faults injected under SQLite (a VFS that fails chosen calls, `SQLiteFaults`): a full disk
/// and failing reads, writes, syncs and truncations, at every point of an add, an update, a delete,
/// a read and a password change in turn. A call that meets a fault returns errSecDiskFull or
/// errSecIO and changes nothing; a call that succeeds made its whole change; either way the file
/// passes SQLite's integrity check, reopens with the same content and takes writes again.
@Suite(.freshKeychain(accessGroups: ["fault.group"]))
struct FaultTests {
    /// A fault to inject: which calls fail, and how.
    struct Fault: Sendable, CustomTestStringConvertible {
        let operations: SQLiteFaults.Operations
        let failure: SQLiteFaults.Failure
        let name: String
        /// Every call from the first failed one on fails (a full disk stays full); else only that one.
        let persistent: Bool

        var expectedStatus: OSStatus { failure == .diskFull ? errSecDiskFull : errSecIO }
        var testDescription: String { name }
    }

    static let faults = [
        Fault(operations: .write, failure: .diskFull, name: "disk full", persistent: true),
        Fault(operations: .write, failure: .ioError, name: "write error", persistent: false),
        Fault(operations: .write, failure: .ioError, name: "write errors", persistent: true),
        Fault(operations: .sync, failure: .ioError, name: "fsync error", persistent: false),
        Fault(operations: .read, failure: .ioError, name: "read error", persistent: false),
        Fault(operations: .read, failure: .ioError, name: "read errors", persistent: true),
        Fault(operations: .truncate, failure: .ioError, name: "truncate error", persistent: true),
    ]

    /// One call under test, and what it changes when it succeeds.
    enum Call: String, CaseIterable, Sendable {
        case add, update, delete, read
        /// An update, then closing the keychain: the last connection's close copies the log into
        /// the file (SQLite's checkpoint) and removes it, under the fault.
        case updateAndClose

        func run() -> OSStatus {
            switch self {
            case .updateAndClose:
                let status = VersionedItems.update("a3", "v2")
                KeychainRegistry.shared.closeAll()
                return status
            case .add: return VersionedItems.add("new", "v1")
            case .update: return VersionedItems.update("a3", "v2")
            case .delete: return VersionedItems.delete("a5")
            case .read:
                let (status, version) = VersionedItems.read("a2")
                // A read that succeeds must give the item as written.
                return status == errSecSuccess && version != "v0" ? -1 : status
            }
        }

        func apply(to model: [String: String]) -> [String: String] {
            var model = model
            switch self {
            case .add: model["new"] = "v1"
            case .update, .updateAndClose: model["a3"] = "v2"
            case .delete: model["a5"] = nil
            case .read: break
            }
            return model
        }
    }

    static let seed = Dictionary(uniqueKeysWithValues: (0..<8).map { ("a\($0)", "v0") })

    @Test("A full disk or an I/O error at any point of a call gives errSecDiskFull or errSecIO and changes nothing",
          arguments: Call.allCases, faults)
    func callsMeetingFaults(call: Call, fault: Fault) throws {
        let home = try #require(TestHome.current).path
        try sweep("\(call)", fault, home: home, call: call.run) { (status: OSStatus, context: String) throws in
            let want = status == errSecSuccess ? call.apply(to: Self.seed) : Self.seed
            #expect(readAll() == want, "\(context): the same connection sees another content")
            // As a process would see it had this one crashed now. After a failed fsync the log's
            // bytes may hold the whole change: the recovery may find it, whole or not at all.
            let crashed = try crashView(home: home)
            #expect(crashed == want || (fault.operations == .sync && crashed == call.apply(to: Self.seed)),
                    "\(context): after a crash the keychain holds \(String(describing: crashed))")
            // As the next process would see it.
            KeychainRegistry.shared.closeAll()
            #expect(try KeychainRegistry.shared.defaultKeychain().integrityCheck() == "ok", "\(context)")
            #expect(readAll() == want, "\(context): the reopened keychain has another content")
        }
    }

    @Test("A password change meeting a fault keeps the old password and every item", arguments: faults)
    func passwordChangeMeetingFaults(fault: Fault) throws {
        let home = try #require(TestHome.current).path
        let new = Array("new password".utf8)
        try sweep("password change", fault, home: home, call: { SecKeychainChangePassword(nil, 0, nil, UInt32(new.count), new) }) { (status: OSStatus, context: String) throws in
            KeychainRegistry.shared.closeAll()
            #expect(try KeychainRegistry.shared.defaultKeychain().integrityCheck() == "ok", "\(context)")
            if status == errSecSuccess {
                // Locked when reopened; the new password opens it, nothing else does.
                #expect(readAll() == nil, "\(context): the reopened keychain is not locked")
                let wrong = Array("wrong".utf8)
                #expect(SecKeychainUnlock(nil, UInt32(wrong.count), wrong, true) == errSecAuthFailed, "\(context)")
                #expect(SecKeychainUnlock(nil, UInt32(new.count), new, true) == errSecSuccess, "\(context)")
            }
            #expect(readAll() == Self.seed, "\(context): the items changed")
        }
    }

    /// Runs `call` on a fresh copy of the seed with `fault` failing the first matching I/O call,
    /// then the second, and so on, until the call runs to its end without meeting the fault;
    /// `check` judges each run by its status. After each, the keychain must take a write.
    func sweep(_ name: String, _ fault: Fault, home: String, call: () -> OSStatus,
               check: (OSStatus, String) throws -> Void) throws {
        try SQLiteFaults.install()
        var (failed, succeeded) = (0, 0)
        for skip in 0..<400 {
            try reset(home: home)
            #expect(readAll() == Self.seed)
            // A cold connection: the call reads the file, not SQLite's cache.
            KeychainRegistry.shared.closeAll()
            SQLiteFaults.arm(fault.operations, under: home, skip: skip, times: fault.persistent ? nil : 1, failure: fault.failure)
            let status = call()
            let fired = SQLiteFaults.triggered
            SQLiteFaults.disarm()
            let context = "\(name) with \(fault.name) after \(skip) calls"
            #expect(status == errSecSuccess || status == fault.expectedStatus, "\(context): status \(status)")
            if status == errSecSuccess { succeeded += 1 } else { failed += 1 }
            try check(status, context)
            #expect(VersionedItems.add("later", "v9") == errSecSuccess, "\(context): the keychain takes no writes afterwards")
            if fired == 0 {
                #expect(status == errSecSuccess, "\(context): failed without a fault")
                Reliability.record("faults: \(name) with \(fault.name): \(skip + 1) points, \(failed) failed cleanly, \(succeeded) succeeded whole")
                return
            }
        }
        Issue.record("\(name) with \(fault.name): still meeting the fault after 400 calls")
    }

    // The items (keyhaven-test-helper's VersionedItems): data and label both hold a version.

    /// Every item's version by account (the "later" item left out); nil if a read fails or an
    /// item is torn.
    func readAll() -> [String: String]? {
        let (versions, problem) = VersionedKeychain.readAll()
        guard problem == nil else { return nil }
        return versions.filter { $0.key != "later" }
    }

    /// The content a process finds in a copy of the home's files as they are now, without
    /// SQLite's shared-memory index (as after a crash, the log is read anew); nil if it fails
    /// SQLite's integrity check or a read fails.
    func crashView(home: String) throws -> [String: String]? {
        let copy = home + "-crashed"
        try? FileManager.default.removeItem(atPath: copy)
        try FileManager.default.copyItem(atPath: home, toPath: copy)
        try? FileManager.default.removeItem(atPath: copy + "/login.keychain-db-shm")
        setenv("KEYHAVEN_HOME", copy, 1)
        defer {
            KeychainRegistry.shared.closeAll()
            setenv("KEYHAVEN_HOME", home, 1)
            try? FileManager.default.removeItem(atPath: copy)
        }
        guard try KeychainRegistry.shared.defaultKeychain().integrityCheck() == "ok" else { return nil }
        return readAll()
    }

    /// A new login keychain (no password) holding the seed items.
    func reset(home: String) throws {
        KeychainRegistry.shared.closeAll()
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: home + "/login.keychain-db" + suffix) }
        for (account, version) in Self.seed.sorted(by: { $0.key < $1.key }) {
            try #require(VersionedItems.add(account, version) == errSecSuccess)
        }
    }
}
#endif
