// git-credential-keyhaven: git's credential helper over the keychain (as git-credential-osxkeychain).
//   git config --global credential.helper keyhaven
import ArgumentParser
import KeyhavenCLI

struct GitCredentialKeyhaven: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "git-credential-keyhaven",
        abstract: "git's credential helper over the keychain, as git-credential-osxkeychain on a Mac.",
        discussion: """
            git runs it (git config --global credential.helper keyhaven) and writes the credential on its \
            standard input as key=value lines. get prints the user name and password of the matching \
            internet password (nothing when none matches); store adds or updates one; erase deletes the \
            matching ones (only those with the given password, when git gives one). Items are keyed by \
            protocol, host, port (the protocol's default when the URL names none: a credential for \
            host:8443 is never one for host), path (credential.useHttpPath) and user name, trusted by \
            this helper alone and kept in its own access group.
            """)
    @Argument(help: "get, store or erase; any other is ignored, as git's helpers do.") var operation: String

    func run() throws {
        let status = GitCredential.main(operation: operation)
        if status != 0 { throw ExitCode(status) }
    }
}

GitCredentialKeyhaven.main()
