import ArgumentParser
import FoundationEssentials
import KeychainModel

/// `import-secrets`: moves passwords in from the tools people used before (README, "Moving in").
package struct ImportSecrets: PKICommand {
    package static let configuration = CommandConfiguration(
        commandName: "import-secrets", abstract: "Import passwords from another password store (a Linux addition).",
        discussion: "--from csv FILE reads the CSV exports of Chromium, Firefox, Bitwarden, 1Password and KeePassXC (their header "
            + "row tells which): a row with a URL becomes an internet password (server, protocol, port and path from the URL, "
            + "account from the user name), one without a generic password (service from its title). An item already there "
            + "is left as it is, so importing twice writes nothing twice. --dry-run shows the count and writes nothing.").underKeyhaven
    @Option(name: .long, help: "Where from: csv.") package var from: String
    @Argument(help: "The file (csv).") package var file: String?
    @Flag(name: .long, help: "Count what would be imported; write nothing.") package var dryRun = false
    @Option(name: .customShort("k"), help: "The keychain to import into (default: the default keychain).") package var keychain: String?

    package init() {}

    package func validate() throws {
        guard from == "csv" else {
            throw ValidationError("--from \(from): only csv is read in this version (secret-service and pass are to come)")
        }
        guard file != nil else { throw ValidationError("--from csv needs the file") }
    }

    package func run() throws { try PKIDispatch.run(self) }
}
