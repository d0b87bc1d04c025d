import KeyhavenCLI

/// A PKI subcommand's work, done by `keyhaven-pki` (its options are `KeyhavenCLI`'s).
protocol PKIWork {
    func work() throws
}

/// The worker `keyhaven-pki` registers: runs the work of whichever PKI subcommand was parsed.
package struct PKIWorkRunner: PKIWorker {
    package init() {}

    package func run(_ command: any PKICommand) throws {
        guard let work = command as? any PKIWork else {
            printError("keyhaven: \(type(of: command)._commandName) has no work in this build")
            throw ExitCodeError.unimplemented
        }
        try work.work()
    }
}

enum ExitCodeError: Error { case unimplemented }
