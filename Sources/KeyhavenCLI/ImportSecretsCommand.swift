import ArgumentParser
import FoundationEssentials
import KeychainModel

/// `import-secrets`: moves passwords in from the tools people used before (README, "Moving in").
package struct ImportSecrets: HelperCommand {
    package static let configuration = CommandConfiguration(
        commandName: "import-secrets", abstract: "Import passwords from another password store (a Linux addition).",
        discussion: "--from csv FILE reads the CSV exports of Chromium, Firefox, Bitwarden, 1Password and KeePassXC (their header "
            + "row tells which): a row with a URL becomes an internet password (server, protocol, port and path from the URL, "
            + "account from the user name), one without a generic password (service from its title). --from pass [FOLDER] reads "
            + "a password store (default $PASSWORD_STORE_DIR, else ~/.password-store) through gpg: each entry becomes a generic "
            + "password whose service is its path and whose secret is the decrypted file, with the account from a login:, user: "
            + "or username: line. --from secret-service copies every item of the Secret Service running on the session bus "
            + "(gnome-keyring, KeePassXC), unlocking locked collections through its own prompt, before keyhavend "
            + "--secret-service takes the name over. Everything is read before anything is written; an item already there is "
            + "left as it is, so importing twice writes nothing twice. --dry-run shows the count and writes nothing.").underKeyhaven
    @Option(name: .long, help: "Where from: csv, pass or secret-service.") package var from: String
    @Argument(help: "The file (csv) or the password store's folder (pass).") package var file: String?
    @Flag(name: .long, help: "Count what would be imported; write nothing.") package var dryRun = false
    @Option(name: .customShort("k"), help: "The keychain to import into (default: the default keychain).") package var keychain: String?

    package init() {}

    package func validate() throws {
        switch from {
        case "csv": guard file != nil else { throw ValidationError("--from csv needs the file") }
        case "pass": break
        case "secret-service": guard file == nil else { throw ValidationError("--from secret-service takes no file") }
        default: throw ValidationError("--from \(from): one of csv, pass, secret-service")
        }
    }

    package func run() throws { try HelperDispatch.run(self) }
}
