import Crypto
import Foundation
import KeychainModel
import KeychainTestSupport
import Synchronization
import Testing
@testable import KeychainStore

/// A keychain held open while another process binds it to the TPM, frees it or changes its
/// password: the holder follows as a restart would, never reading with keys that are gone and
/// never unsealing a seal that is gone. The other process is a second open of the same file; the
/// TPM is a sealer in memory that checks each seal's authorization as the TPM does
/// (KeyhavenTPMTests run swtpm, which serves one agent at a time, so two holders cannot share it).
@Suite(.freshKeychain(), .serialized)
struct BoundKeychainFollowTests {
    let caller = Caller(accessGroups: ["g1"])
    let home = KeychainHome(path: TestHome.current!.path)

    @Test("Bound with a password elsewhere: sealed and locked here, and its password unlocks it; a password changed elsewhere: the new one unlocks, the old one fails; freed elsewhere: the device classes open with this home's key")
    func withPassword() throws {
        let sealer = MemorySealer()
        HardwareBinding.install(sealer)
        defer { HardwareBinding.install(nil) }
        let path = TestHome.current!.path + "/held.keychain-db"
        let held = try KeychainRegistry.shared.create(at: path, home: home, password: Array("pw".utf8))
        try add(["dk", "ak"], to: held)
        let other = try KeychainDatabase(path: path, home: home)
        try other.unlock(password: Array("pw".utf8))

        try other.setBound(true, password: Array("pw".utf8))
        #expect(held.status().isBound && !held.status().isUnlocked)
        #expect(read("dk", in: held) == .interactionNotAllowed && read("ak", in: held) == .interactionNotAllowed)
        try held.unlock(password: Array("pw".utf8))
        #expect(read("dk", in: held) == nil && read("ak", in: held) == nil)

        try other.changePassword(old: Array("pw".utf8), new: Array("pw 2".utf8))
        #expect(held.status().isBound && !held.status().isUnlocked)
        #expect(read("dk", in: held) == .interactionNotAllowed)
        let unsealsBefore = sealer.unseals.load(ordering: .relaxed)
        #expect(throws: StoreError.self) { try held.unlock(password: Array("pw".utf8)) }
        // The old password went to the new seal (the TPM's to count), not to the one it opened.
        #expect(sealer.unseals.load(ordering: .relaxed) == unsealsBefore + 1 && sealer.refusals.load(ordering: .relaxed) == 1)
        try held.unlock(password: Array("pw 2".utf8))
        #expect(read("dk", in: held) == nil && read("ak", in: held) == nil)
        try add(["dk after"], to: held)

        held.lock()
        try other.setBound(false, password: Array("pw 2".utf8))
        #expect(!held.status().isBound && !held.status().isUnlocked)
        #expect(read("dk", in: held) == nil && read("dk after", in: held) == nil && read("ak", in: held) == .interactionNotAllowed)
        try held.unlock(password: Array("pw 2".utf8))
        #expect(read("ak", in: held) == nil)
    }

    @Test("Bound without a password elsewhere: the new seal is unsealed here and every item reads; freed elsewhere: this home's key alone reads them")
    func withoutPassword() throws {
        HardwareBinding.install(MemorySealer())
        defer { HardwareBinding.install(nil) }
        let path = TestHome.current!.path + "/open.keychain-db"
        let held = try KeychainRegistry.shared.create(at: path, home: home, password: nil)
        try add(["dk", "ak"], to: held)
        let other = try KeychainDatabase(path: path, home: home)

        try other.setBound(true, password: [])
        #expect(held.status().isBound && held.status().isUnlocked)
        #expect(read("dk", in: held) == nil && read("ak", in: held) == nil)
        try add(["dk bound"], to: held)
        #expect(read("dk bound", in: other) == nil)

        try other.setBound(false, password: [])
        #expect(!held.status().isBound && held.status().isUnlocked)
        #expect(read("dk", in: held) == nil && read("dk bound", in: held) == nil)
    }

    @Test("Bound elsewhere while no sealer is here (a process other than the agent): a clear errSecNotAvailable, never a read with the old keys")
    func boundWhereNoSealerIs() throws {
        let path = TestHome.current!.path + "/plain.keychain-db"
        let held = try KeychainRegistry.shared.create(at: path, home: home, password: nil)
        try add(["dk"], to: held)
        HardwareBinding.install(MemorySealer())
        defer { HardwareBinding.install(nil) }
        try KeychainDatabase(path: path, home: home).setBound(true, password: [])
        HardwareBinding.install(nil)
        #expect(read("dk", in: held) == .notAvailable)
    }

    /// Adds a generic password per account, its class the account's first word, its secret the account.
    private func add(_ accounts: [String], to database: KeychainDatabase) throws {
        for account in accounts {
            let attributes: [String: AttributeValue] = .named([.account: .string(account), .service: .string("follow"),
                                                               .accessible: .string(String(account.prefix(2)))])
            _ = try database.add(NewItem(itemClass: .genericPassword, attributes: attributes, secret: Data(account.utf8)), caller: caller)
        }
    }

    /// nil when the item of `account` reads with its secret, else the error's code.
    private func read(_ account: String, in database: KeychainDatabase) -> StoreError.Code? {
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = .named([.account: .string(account), .service: .string("follow")])
        do throws(StoreError) {
            let found = try database.find(query, caller: caller, withSecrets: true)
            return found.first?.secret == Data(account.utf8) ? nil : .decode
        } catch {
            return error.code
        }
    }
}

/// Seals with AES-GCM under a key of its own, the authorization as associated data: a wrong
/// authorization fails (and is counted), as the TPM's policy does.
private final class MemorySealer: HardwareSealer {
    private let key = SymmetricKey(size: .bits256)
    let unseals = Atomic<Int>(0)
    let refusals = Atomic<Int>(0)

    func seal(_ secret: [UInt8], authorization: [UInt8]) throws(StoreError) -> Data {
        guard let sealed = try? AES.GCM.seal(secret, using: key, authenticating: authorization).combined else {
            throw StoreError(.internalError, "sealing failed")
        }
        return sealed
    }

    func unseal(_ sealed: Data, authorization: [UInt8]) throws(StoreError) -> [UInt8] {
        unseals.add(1, ordering: .relaxed)
        guard let box = try? AES.GCM.SealedBox(combined: sealed), let secret = try? AES.GCM.open(box, using: key, authenticating: authorization) else {
            refusals.add(1, ordering: .relaxed)
            throw StoreError(.authFailed, "the seal's authorization is wrong")
        }
        return Array(secret)
    }
}
