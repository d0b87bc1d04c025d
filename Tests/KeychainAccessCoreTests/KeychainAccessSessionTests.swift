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
        var runner = try CommandRunner()
        defer { runner.finish() }
        // The session finds the agent as the window does: through this process's environment.
        let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"]
        setenv("XDG_RUNTIME_DIR", runner.runtime, 1)
        defer { if let runtime { setenv("XDG_RUNTIME_DIR", runtime, 1) } else { unsetenv("XDG_RUNTIME_DIR") } }
        #expect(try runner.run("add-generic-password", "-a", "ada", "-s", "imap.example.org", "-l", "Mail", "-w", "secret").status == 0)
        #expect(try runner.run("create-keychain", "-p", "pw", "work").status == 0)
        #expect(try runner.run("add-internet-password", "-a", "octo", "-s", "github.com", "-r", "htps", "-w", "token", "work").status == 0)
        // This test program is not keyhaven: it is given every group, as a user would.
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        #expect(try runner.run("access", "grant", "-T", me, "-G", "*").status == 0)

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
