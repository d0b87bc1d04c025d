import Foundation
import KeychainAccessCore
import KeychainModel
import KeychainTestSupport
import Testing

/// The keychain commands of Keychain Access (New, Delete, Make Default, Change Password, Change
/// Settings) through its model, against a real agent, checked with the keyhaven command.
@Suite(.freshKeychain(), .serialized)
struct KeychainCommandsTests {
    @Test("New Keychain: mismatched passwords, a bad name and an existing name are said and change nothing; a new one is listed, selected, unlocked and in the search list")
    func newKeychain() throws {
        try withAgent { (runner) throws in
            try grantEveryGroup(runner)
            let model = KeychainAccessModel()
            model.refresh()
            #expect(model.newKeychain(named: "work", password: Array("pw".utf8), confirmation: Array("pX".utf8)) == "The passwords do not match.")
            #expect(model.newKeychain(named: "../x", password: [], confirmation: [])?.contains("no slash") == true)
            #expect(model.keychains.map(\.name) == ["login"])
            #expect(model.newKeychain(named: " work ", password: Array("pw".utf8), confirmation: Array("pw".utf8)) == nil)
            #expect(model.selectedKeychain?.name == "work" && model.selectedKeychain?.isUnlocked == true && model.selectedKeychain?.hasPassword == true)
            #expect(try runner.run("list-keychains").output.contains("work.keychain-db"))
            #expect(model.newKeychain(named: "work", password: [], confirmation: [])?.contains("exists") == true)
            #expect(try runner.run("lock-keychain", "work").status == 0)
            #expect(try runner.run("unlock-keychain", "-p", "pw", "work").status == 0)
        }
    }

    @Test("Make Default, Change Password (a wrong old one and a mismatch said), Change Settings, and Delete Keychain, each as keyhaven then sees it; the login keychain is not deleted")
    func keychainCommands() throws {
        try withAgent { (runner) throws in
            #expect(try runner.run("create-keychain", "-p", "pw", "work").status == 0)
            try grantEveryGroup(runner)
            let model = KeychainAccessModel()
            model.refresh()
            #expect(model.deleteSelectedKeychain()?.contains("cannot be deleted") == true)
            model.select(try #require(model.keychains.first { $0.name == "work" }).path)

            #expect(model.makeSelectedDefault() == nil)
            #expect(try runner.run("default-keychain").output.contains("work.keychain-db"))
            #expect(model.keychains.first?.name == "work" && model.selectedKeychain?.isDefault == true)

            #expect(model.changeSelectedPassword(old: Array("no".utf8), new: Array("new".utf8), confirmation: Array("new".utf8))
                    == "The password is not this keychain's.")
            #expect(model.changeSelectedPassword(old: Array("pw".utf8), new: Array("new".utf8), confirmation: Array("neu".utf8))
                    == "The new passwords do not match.")
            #expect(model.changeSelectedPassword(old: Array("pw".utf8), new: Array("new".utf8), confirmation: Array("new".utf8)) == nil)
            #expect(try runner.run("lock-keychain", "work").status == 0)
            #expect(try runner.run("unlock-keychain", "-p", "pw", "work").status != 0)
            #expect(try runner.run("unlock-keychain", "-p", "new", "work").status == 0)

            #expect(model.setSelectedSettings(lockAfterMinutes: 0, lockOnSleep: true)?.contains("1 to") == true)
            #expect(model.setSelectedSettings(lockAfterMinutes: 15, lockOnSleep: true) == nil)
            #expect(try runner.run("show-keychain-info", "work").output.contains("lock-on-sleep timeout=900s"))
            #expect(model.selectedSettings() == LockSettings(lockOnSleep: true, useLockInterval: true, lockInterval: 900))
            #expect(model.setSelectedSettings(lockAfterMinutes: nil, lockOnSleep: false) == nil)
            #expect(try runner.run("show-keychain-info", "work").output.contains("no-timeout"))

            #expect(model.deleteSelectedKeychain() == nil)
            #expect(model.keychains.map(\.name) == ["login"] && model.selectedKeychain?.isDefault == true)
            #expect(!FileManager.default.fileExists(atPath: TestHome.current!.path + "/work.keychain-db"))
            #expect(try runner.run("default-keychain").output.contains("login.keychain-db"))
        }
    }
}
