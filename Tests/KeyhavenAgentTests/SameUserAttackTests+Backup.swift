import Foundation
import KeychainTestSupport
import Testing

/// A backup is a copy of the keychain that nothing guards but its password, and Keychain Access's
/// use of an item passes over its access object: as the user, no program but the administrator
/// programs gets either, the keychain's password in hand or not.
extension SameUserAttackTests {
    @Test("Only the keyhaven command gets a backup, and only with the keychain's password; only the administrator programs use an item by the keychain's password: another program of the user is refused even with it, a wrong password writes nothing; only they ask the agent for a sync round or its sync status")
    func backupNeedsAdministratorAndPassword() throws {
        let v = try Victim()
        defer { v.finish() }
        let keychain = v.session.home + "/vault.keychain-db"
        let socket = v.session.runtime + "/keyhaven/agent.sock"
        #expect(try v.session.keyhaven("create-keychain", "-p", "vault pw", "vault").status == 0)
        #expect(try v.session.keyhaven("add-generic-password", "-s", "svc", "-a", "acct", "-w", "kept", "vault").status == 0)
        let folder = try v.userFolder("backups")

        let asked = try v.run(v.helper, ["backup", socket, keychain, folder + "/by-program", "vault pw"])
        #expect(asked.output.contains("refused only the keyhaven command and Keychain Access may back up a keychain"),
                "\(asked.output) \(asked.error)")
        let revealed = try v.run(v.helper, ["reveal", socket, keychain, "vault pw"])
        #expect(revealed.output.contains("refused only the keyhaven programs may use an item with the keychain's password"),
                "\(revealed.output) \(revealed.error)")
        let syncStatus = try v.run(v.helper, ["sync-status", socket])
        #expect(syncStatus.output.contains("refused only the keyhaven command and Keychain Access may ask the agent to sync or about sync"),
                "\(syncStatus.output) \(syncStatus.error)")
        let notSyncing = try v.session.keyhaven("sync", "status", "--json")
        #expect(notSyncing.status == 0 && notSyncing.output == "{\"syncing\":false}\n", "\(notSyncing)")
        let guessed = try v.session.keyhaven("backup-keychain", "-p", "not the pw", "vault", folder + "/guessed")
        #expect(guessed.status == 51, "\(guessed)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder).isEmpty)

        let made = try v.session.keyhaven("backup-keychain", "-p", "vault pw", "vault", folder + "/backup.keychain-db")
        #expect(made.status == 0, "\(made)")
        #expect(FileManager.default.fileExists(atPath: folder + "/backup.keychain-db"))
    }
}
