import Foundation
import KeychainStore
import KeyhavenAgentClient
import KeychainTestSupport
import Testing

/// A look-up that asks for passwords' secrets alone (`find` with `withAttributes` false, what
/// `SecItemCopyMatching` sends for `kSecReturnData` alone): the agent leaves the attributes and
/// access objects of password items off the answer, and nothing else.
@Suite(.freshKeychain())
struct AgentSecretsAloneTests {
    @Test("Password items come back with their secret, reference and class but no attributes or access; keys stay whole")
    func passwordsWithoutAttributes() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("agent", "start").status == 0)
        let client = try AgentClient(socket: AgentSocket(path: k.runtime + "/keyhaven/agent.sock"))
        let keychain = TestHome.current!.path + "/login.keychain-db"
        let caller = Caller(accessGroups: [AccessGroupConfiguration.defaultGroup])
        let items = [
            NewItem(itemClass: .genericPassword, attributes: ["acct": .string("a"), "svce": .string("s")], secret: Data("generic".utf8)),
            NewItem(itemClass: .internetPassword, attributes: ["acct": .string("a"), "srvr": .string("example.com")], secret: Data("internet".utf8)),
            // A public key: its class and attributes say whether its data may leave, so it stays whole.
            NewItem(itemClass: .key, attributes: ["kcls": .number(0), "atag": .string("t")], secret: Data([4, 1, 2, 3])),
        ]
        for item in items { _ = try client.send(.add(keychain: keychain, item: item, caller: caller)) }

        for item in items {
            var query = ItemQuery(itemClass: item.itemClass)
            query.limit = 1
            let whole = try #require(try client.send(.find(keychains: [keychain], query: query, caller: caller, withSecrets: true)).items().first)
            let alone = try #require(try client.send(.find(keychains: [keychain], query: query, caller: caller, withSecrets: true,
                                                           withAttributes: false)).items().first)
            #expect(whole.attributes["acct"] == item.attributes["acct"] || item.itemClass == .key)
            #expect(whole.access != nil)
            #expect(alone.secret == item.secret && alone.itemClass == item.itemClass)
            #expect(alone.persistentReference == whole.persistentReference && alone.rowID == whole.rowID)
            if item.itemClass.isPassword {
                #expect(alone.attributes.isEmpty && alone.access == nil)
            } else {
                #expect(alone.attributes == whole.attributes && alone.access == whole.access)
            }
        }
    }
}
