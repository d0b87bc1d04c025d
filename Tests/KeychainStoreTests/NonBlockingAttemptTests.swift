import Dispatch
import Foundation
import KeychainTestSupport
import Testing
@testable import KeychainStore

/// The agent answers a quick look-up on its event loop only when no lock it needs is held
/// elsewhere: inside a ``NonBlockingAttempt`` the engine fails with `.wouldBlock` at once, having
/// changed nothing, instead of waiting.
@Suite(.freshKeychain())
struct NonBlockingAttemptTests {
    let caller = Caller(accessGroups: ["g1"])

    func item(_ account: String) -> NewItem {
        NewItem(itemClass: .genericPassword, attributes: ["acct": .string(account), "svce": .string("s")], secret: Data("pw".utf8))
    }

    func query(_ account: String) -> ItemQuery {
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = ["acct": .string(account), "svce": .string("s")]
        return query
    }

    /// Runs `body` while another thread holds `database`'s session, as a long write does.
    func whileHeld(_ database: KeychainDatabase, _ body: () throws -> Void) throws {
        let held = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), done = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            _ = try? database.withSession { _ in
                held.signal()
                release.wait()
            }
            done.signal()
        }
        held.wait()
        defer {
            release.signal()
            done.wait()
        }
        try body()
    }

    @Test("A look-up of a keychain another thread holds is .wouldBlock inside an attempt, and waits outside one")
    func heldSession() throws {
        let database = try KeychainRegistry.shared.defaultKeychain()
        _ = try database.add(item("a"), caller: caller)
        try whileHeld(database) {
            #expect(throws: StoreError(.wouldBlock, "the keychain is in use by another thread")) {
                try NonBlockingAttempt.run { () throws(StoreError) in try database.find(query("a"), caller: caller, withSecrets: true) }
            }
        }
        let found = try NonBlockingAttempt.run { () throws(StoreError) in try database.find(query("a"), caller: caller, withSecrets: true) }
        #expect(found.first?.secret == Data("pw".utf8))
        #expect(!NonBlockingAttempt.isActive)
    }

    @Test("A search over several keychains does not pass over a busy one: the whole search is .wouldBlock")
    func searchDoesNotSkipBusyKeychain() throws {
        let busy = try KeychainRegistry.shared.defaultKeychain()
        _ = try busy.add(item("a"), caller: caller)
        let other = try TemporaryFolder.make(prefix: "keyhaven-other")
        defer { try? FileManager.default.removeItem(atPath: other) }
        let otherHome = KeychainHome(path: other)
        let free = try KeychainRegistry().database(at: otherHome.defaultKeychainPath, home: otherHome, create: true)
        _ = try free.add(item("a"), caller: caller)
        try whileHeld(busy) {
            var error: StoreError?
            do throws(StoreError) {
                _ = try NonBlockingAttempt.run { () throws(StoreError) in
                    try KeychainSearch.find(query("a"), in: [busy, free], caller: caller, withSecrets: false)
                }
            } catch let caught { error = caught }
            #expect(error?.code == .wouldBlock)
            // Outside an attempt, a keychain that cannot answer is still passed over when another has matches.
        }
        var all = query("a")
        all.limit = nil
        #expect(try KeychainSearch.find(all, in: [busy, free], caller: caller, withSecrets: false).count == 2)
    }

    @Test("Opening a keychain is not attempted without waiting; one open already is used")
    func registryOpens() throws {
        let registry = KeychainRegistry()
        let home = KeychainHome(path: TestHome.current!.path)
        #expect(throws: StoreError(.wouldBlock, "the keychain is not open yet: opening it reads its file")) {
            try NonBlockingAttempt.run { () throws(StoreError) in try registry.database(at: home.defaultKeychainPath, home: home, create: true) }
        }
        let opened = try registry.database(at: home.defaultKeychainPath, home: home, create: true)
        let again = try NonBlockingAttempt.run { () throws(StoreError) in try registry.database(at: home.defaultKeychainPath, home: home, create: true) }
        #expect(again === opened)
    }
}
