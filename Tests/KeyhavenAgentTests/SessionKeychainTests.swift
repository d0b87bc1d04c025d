import Foundation
import KeyhavenAgent
import KeyhavenAgentClient
import KeychainModel
import KeychainStore
import KeychainTestSupport
import Testing

/// The agent's in-memory keychain behind the Secret Service's `session` collection
/// (docs/secret-service.md, "The session collection").
@Suite(.freshKeychain())
struct SessionKeychainTests {
    @Test("Items live in memory: added, found, never locked, no file at its name or anywhere in the home; another agent has none")
    func inMemory() throws {
        let home = try KeychainHome.current()
        let service = AgentService(home: home)
        let path = home.sessionKeychainPath
        let item = NewItem(itemClass: .genericPassword, attributes: ["svce": .string("mem"), "acct": .string("ada")],
                           secret: Data("MEMORY-ONLY".utf8))
        #expect(service.respond(to: .add(keychain: path, item: item, caller: Caller(accessGroups: ["g"]))).error == nil)
        let found = service.respond(to: .find(keychains: [path], query: ItemQuery(itemClass: .genericPassword), caller: Caller(accessGroups: ["g"]),
                                              withSecrets: true, withAttributes: true))
        #expect(try found.get().items().first?.secret == Data("MEMORY-ONLY".utf8))
        _ = service.respond(to: .lock(keychain: path))  // it has no password: it stays open
        let status = try service.respond(to: .status(keychain: path)).get().status()
        #expect(!status.hasPassword && status.isUnlocked)
        #expect(!FileManager.default.fileExists(atPath: path))
        let files = try FileManager.default.subpathsOfDirectory(atPath: home.path)
        for file in files {
            let bytes = FileManager.default.contents(atPath: home.path + "/" + file) ?? Data()
            #expect(bytes.range(of: Data("MEMORY-ONLY".utf8)) == nil, "\(file)")
        }
        let other = AgentService(home: home)
        let none = other.respond(to: .find(keychains: [path], query: ItemQuery(itemClass: .genericPassword), caller: Caller(accessGroups: ["g"]),
                                           withSecrets: false, withAttributes: true))
        #expect(none.error?.code == .itemNotFound)
    }

    @Test("What only a keychain file has is refused: a password, settings, a backup, a TPM binding, being made or deleted; nothing is written")
    func fileOnlyRequestsRefused() throws {
        let home = try KeychainHome.current()
        let service = AgentService(home: home)
        let path = home.sessionKeychainPath
        let requests: [AgentRequest] = [
            .create(keychain: path, password: nil), .deleteKeychain(keychain: path),
            .changePassword(keychain: path, old: Data(), new: Data("pw".utf8)),
            .setSettings(keychain: path, settings: LockSettings()),
            .backup(keychain: path, destination: home.path + "/backup", password: Data("pw".utf8)),
            .setBound(keychain: path, password: nil, bound: true),
        ]
        for request in requests {
            #expect(service.respond(to: request).error?.code == .unimplemented, "\(request)")
        }
        #expect(!FileManager.default.fileExists(atPath: path) && !FileManager.default.fileExists(atPath: home.path + "/backup"))
        #expect(try service.respond(to: .status(keychain: path)).get().status().hasPassword == false)
    }
}
