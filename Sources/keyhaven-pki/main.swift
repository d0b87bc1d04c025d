// keyhaven-pki: the work of keyhaven's certificate and key subcommands (import, export,
// find-certificate, find-identity, delete-certificate, delete-identity, create-keypair). keyhaven
// runs it in its own place for them, so that its other subcommands start without the X.509,
// PKCS#12 and key-encoding libraries. Run directly, it takes keyhaven's command lines.
import KeyhavenCLI
import KeyhavenPKI

PKIDispatch.worker = PKIWorkRunner()
KeyhavenCommand.main(arguments: Array(CommandLine.arguments.dropFirst()))
