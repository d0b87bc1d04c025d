// keyhaven-pki: the work of keyhaven's certificate and key subcommands (import, export,
// find-certificate, find-identity, delete-certificate, delete-identity, create-keypair) and of
// import-secrets. keyhaven runs it in its own place for them, so that its other subcommands start
// without the X.509, PKCS#12 and key-encoding libraries. Run directly, it takes keyhaven's
// command lines.
import KeyhavenCLI
import KeyhavenImport
import KeyhavenPKI

// Both modules' subcommands conform to HelperWork; the runner finds whichever was parsed.
HelperDispatch.worker = HelperWorkRunner()
KeyhavenCommand.main(arguments: Array(CommandLine.arguments.dropFirst()))
