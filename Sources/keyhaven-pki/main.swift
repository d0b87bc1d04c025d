// keyhaven-pki: the work of keyhaven's certificate and key subcommands (import, export,
// find-certificate, find-identity, delete-certificate, delete-identity, create-keypair), of
// import-secrets and of ssh. keyhaven runs it in its own place for them, so that its other
// subcommands start without the X.509, PKCS#12 and key-encoding libraries. Run directly, it
// takes keyhaven's command lines; run by `keyhaven ssh import`'s ssh-add as its askpass, it
// answers the passphrase prompt (``SSHAskpass``).
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import KeyhavenCLI
import KeyhavenImport
import KeyhavenPKI

if ProcessInfo.processInfo.environment[SSHAskpass.variable] == "1" {
    exit(SSHAskpass.answer(CommandLine.arguments.dropFirst().first ?? ""))
}
// Both modules' subcommands conform to HelperWork; the runner finds whichever was parsed.
HelperDispatch.worker = HelperWorkRunner()
KeyhavenCommand.main(arguments: Array(CommandLine.arguments.dropFirst()))
