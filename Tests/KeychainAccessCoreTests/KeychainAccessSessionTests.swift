import Foundation
import KeychainAccessCore
import KeychainModel
import KeychainTestSupport
import Testing

/// Keychain Access's session with a real agent: the keychains with their lock state, the items
/// of each, lock and unlock.
@Suite(.freshKeychain(), .serialized)
struct KeychainAccessSessionTests {
    @Test("The keychains, the default first, with their lock state; rows of every item; lock empties the list, the password brings it back, a wrong one is refused")
    func keychainsAndItems() throws {
        try withAgent { runner in
            #expect(try runner.run("add-generic-password", "-a", "ada", "-s", "imap.example.org", "-l", "Mail", "-w", "secret").status == 0)
            #expect(try runner.run("create-keychain", "-p", "pw", "work").status == 0)
            #expect(try runner.run("add-internet-password", "-a", "octo", "-s", "github.com", "-r", "htps", "-w", "token", "work").status == 0)
            try grantEveryGroup(runner)

            let session = try KeychainAccessSession.open()
            let keychains = try session.keychains()
            #expect(keychains.map(\.name) == ["login", "work"])
            #expect(keychains[0].isDefault && !keychains[1].isDefault)
            #expect(keychains[1].hasPassword && keychains[1].isUnlocked)
            #expect(keychains[1].accessibleDescription == "work, unlocked")
            let login = try session.rows(in: keychains[0].path)
            #expect(login.map(\.name) == ["Mail"] && login[0].account == "ada" && login[0].keychain == "login", "\(login.map { ($0.name, $0.kind, $0.location) })")
            #expect(try session.rows(in: keychains[1].path).map(\.location) == ["https://github.com"])

            try session.lock(keychains[1].path)
            #expect(try session.keychains()[1].isUnlocked == false)
            #expect(try session.rows(in: keychains[1].path).isEmpty)
            #expect(throws: StoreError.self) { try session.unlock(keychains[1].path, password: Array("wrong".utf8)) }
            #expect(try session.keychains()[1].isUnlocked == false)
            try session.unlock(keychains[1].path, password: Array("pw".utf8))
            #expect(try session.rows(in: keychains[1].path).map(\.account) == ["octo"])
        }
    }

    @Test("A keychain with a label (a Secret Service collection's) is shown by it; without one, by its file's name")
    func labels() throws {
        try withAgent { runner in
            #expect(try runner.run("create-keychain", "-p", "", "work").status == 0)
            let home = KeychainHome(path: TestHome.current!.path)
            var preferences = try KeychainPreferences.load(home)
            let work = home.path + "/work.keychain-db"
            preferences.setLabel("Work accounts", of: work)
            try preferences.save(home)
            #expect(try KeychainAccessSession.open().keychains().map(\.name) == ["login", "Work accounts"])
            #expect(try runner.run("list-keychains").output.contains("work.keychain-db\" (Work accounts)\n"))
            preferences.setLabel("work", of: work)
            #expect(preferences.labels == nil, "the file's own name is no label")
            try preferences.save(home)
            #expect(try KeychainAccessSession.open().keychains().map(\.name) == ["login", "work"])
        }
    }
}

/// What the window shows and does, through its model, against a real agent.
@Suite(.freshKeychain(), .serialized)
struct KeychainAccessModelTests {
    @Test("The model selects the default keychain, filters as the search is typed, locks and unlocks (a wrong password said, nothing changed), and says when the agent is gone, then reconnects")
    func modelFollowsTheAgent() throws {
        try withAgent { runner in
            #expect(try runner.run("create-keychain", "-p", "pw", "work").status == 0)
            #expect(try runner.run("default-keychain", "-s", "work").status == 0)
            #expect(try runner.run("add-generic-password", "-a", "ada", "-s", "mail", "-w", "x", "work").status == 0)
            #expect(try runner.run("add-generic-password", "-a", "bob", "-s", "vpn", "-w", "y", "work").status == 0)
            try grantEveryGroup(runner)

            let model = KeychainAccessModel()
            model.refresh()
            #expect(model.message == nil)
            #expect(model.selectedKeychain?.name == "work" && model.selectedKeychain?.isDefault == true)
            #expect(model.shown.map(\.account) == ["ada", "bob"])
            model.browser.search = "vpn"
            #expect(model.shown.map(\.account) == ["bob"])
            model.lockSelected()
            #expect(model.selectedKeychain?.isUnlocked == false && model.shown.isEmpty)
            #expect(model.unlockSelected(password: Array("nope".utf8)) == "The password is not this keychain's.")
            #expect(model.selectedKeychain?.isUnlocked == false)
            #expect(model.unlockSelected(password: Array("pw".utf8)) == nil)
            #expect(model.shown.map(\.account) == ["bob"])
            // Another program adds an item: the next refresh (the window's every second) shows it.
            #expect(try runner.run("add-generic-password", "-a", "carol", "-s", "vpn2", "-w", "z", "work").status == 0)
            model.refresh()
            #expect(model.shown.map(\.account) == ["bob", "carol"])

            #expect(try runner.run("agent", "stop").status == 0)
            // No agent and none may start (the socket's folder is made unusable): it says so.
            let blocked = runner.runtime + "/keyhaven"
            try? FileManager.default.removeItem(atPath: blocked)
            #expect(FileManager.default.createFile(atPath: blocked, contents: Data()))
            model.refresh()
            #expect(model.message?.hasPrefix("The keychain agent is not reachable") == true)
            try FileManager.default.removeItem(atPath: blocked)
            model.refresh()
            #expect(model.message == nil && model.selectedKeychain?.name == "work")
        }
    }
}

/// Runs `body` with the test's own agent, which this process finds as the window does: through
/// its `XDG_RUNTIME_DIR`, set for the while.
func withAgent(_ body: (CommandRunner) throws -> Void) throws {
    let runner = try CommandRunner()
    defer { runner.finish() }
    let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"]
    setenv("XDG_RUNTIME_DIR", runner.runtime, 1)
    defer { if let runtime { setenv("XDG_RUNTIME_DIR", runtime, 1) } else { unsetenv("XDG_RUNTIME_DIR") } }
    try body(runner)
}

/// This test program is not keyhaven: it is given every group, as a user would.
func grantEveryGroup(_ runner: CommandRunner) throws {
    let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    #expect(try runner.run("access", "grant", "-T", me, "-G", "*").status == 0)
}
