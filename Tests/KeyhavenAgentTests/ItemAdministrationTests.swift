import Foundation
import KeyhavenAgent
import KeyhavenAgentClient
import KeychainModel
import KeychainStore
import KeychainTestSupport
import Testing

/// Keychain Access's `administer` request: the keychain's password stands in for an item's
/// access object, for the administrator programs only.
@Suite(.freshKeychain())
struct ItemAdministrationTests {
    let stranger = ItemAccess(applications: [TrustedApplication(path: "/usr/bin/true", digest: Data(repeating: 7, count: 32))])

    func add(_ service: AgentService, _ keychain: String, group: String = "keyhaven", access: ItemAccess? = nil) throws -> PersistentReference {
        let item = NewItem(itemClass: .genericPassword, attributes: ["svce": .string("mail"), "acct": .string("ada"), "agrp": .string(group)],
                           secret: Data("s3cret".utf8), access: access ?? stranger)
        let response = service.respond(to: .add(keychain: keychain, item: item, caller: Caller(accessGroups: [group])))
        return try response.get().item().persistentReference
    }

    func administer(_ service: AgentService, _ keychain: String, _ reference: PersistentReference, _ password: String?,
                    _ action: ItemAdministration) -> AgentResponse {
        service.respond(to: .administer(keychain: keychain, reference: reference, password: password.map { Data($0.utf8) }, action: action))
    }

    @Test("With the keychain's password an item that trusts another program is revealed, relabelled and deleted; without it or with a wrong one nothing is given or changed")
    func passwordStandsInForTheAccessObject() throws {
        let home = try KeychainHome.current()
        let service = AgentService(home: home)
        let keychain = home.path + "/work.keychain-db"
        #expect(service.respond(to: .create(keychain: keychain, password: Data("pw".utf8))).error == nil)
        let reference = try add(service, keychain)

        for password in [nil, "wrong"] {
            #expect(administer(service, keychain, reference, password, .reveal).error?.code == .authFailed)
            #expect(administer(service, keychain, reference, password, .update(attributes: ["labl": .string("X")])).error?.code == .authFailed)
            #expect(administer(service, keychain, reference, password, .delete).error?.code == .authFailed)
        }
        let revealed = administer(service, keychain, reference, "pw", .reveal)
        #expect(try revealed.get().item().secret == Data("s3cret".utf8))

        let changes: [String: AttributeValue] = ["labl": .string("Mail"), "acct": .string("ada@example.org"), "icmt": .string("work mail")]
        let updated = administer(service, keychain, reference, "pw", .update(attributes: changes))
        let attributes = try updated.get().item().attributes
        #expect(attributes["labl"] == .string("Mail") && attributes["acct"] == .string("ada@example.org") && attributes["icmt"] == .string("work mail"))
        // Only the label, account and comment: never the group or anything that moves the item.
        let moved = administer(service, keychain, reference, "pw", .update(attributes: ["agrp": .string("other"), "labl": .string("Y")]))
        #expect(moved.error?.code == .invalidParameter)
        #expect(try administer(service, keychain, reference, "pw", .reveal).get().item().attributes["labl"] == .string("Mail"))

        guard case .answer(.done) = administer(service, keychain, reference, "pw", .delete) else {
            Issue.record("a delete answers done")
            return
        }
        #expect(administer(service, keychain, reference, "pw", .reveal).error?.code == .itemNotFound)
    }

    @Test("A keychain without a password needs none; the agent's own items are refused; a locked keychain gives nothing")
    func passwordlessOwnItemsAndLocked() throws {
        let home = try KeychainHome.current()
        let service = AgentService(home: home)
        let open = home.path + "/open.keychain-db"
        #expect(service.respond(to: .create(keychain: open, password: nil)).error == nil)
        let reference = try add(service, open)
        #expect(try administer(service, open, reference, nil, .reveal).get().item().secret == Data("s3cret".utf8))
        let own = try add(service, open, group: AgentGroups.portal)
        #expect(administer(service, open, own, nil, .reveal).error?.code == .missingEntitlement)

        let locked = home.path + "/locked.keychain-db"
        #expect(service.respond(to: .create(keychain: locked, password: Data("pw".utf8))).error == nil)
        let inside = try add(service, locked)
        #expect(service.respond(to: .lock(keychain: locked)).error == nil)
        let refused = administer(service, locked, inside, "pw", .reveal)
        #expect(refused.error?.code == .interactionNotAllowed, "\(String(describing: refused.error))")
    }
}
