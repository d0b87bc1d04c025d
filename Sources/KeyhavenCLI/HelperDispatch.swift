#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ArgumentParser

/// A subcommand whose work lives in a helper executable installed beside `keyhaven`, which
/// `keyhaven` runs in its place (`execv`, same arguments): its options live here, so `keyhaven`
/// parses, validates and documents it. The helpers are `keyhaven-pki` (certificates and keys:
/// X.509, PKCS#12 and key encodings, from swift-crypto, swift-asn1 and OpenSSL's
/// libcrypto; and the importers of `import-secrets`) and `keyhaven-sync` (the sync engine and its
/// HTTP client).
///
/// Why: linking those libraries made every `keyhaven` process a third slower to start
/// (docs/benchmarks.md, "The command"), and password look-ups in scripts are what the command
/// runs most.
package protocol HelperCommand: ParsableCommand {}

/// A helper subcommand's work, in a module the helper executable links.
package protocol HelperWork {
    func work() throws
}

/// How a helper executable runs what it parsed.
package protocol HelperWorker: Sendable {
    func run(_ command: any HelperCommand) throws
}

/// The worker a helper registers: runs the work of whichever helper subcommand was parsed.
package struct HelperWorkRunner: HelperWorker {
    package init() {}

    package func run(_ command: any HelperCommand) throws {
        guard let work = command as? any HelperWork else {
            printError("keyhaven: \(type(of: command)._commandName) has no work in this build")
            throw ExitCode(1)
        }
        try work.work()
    }
}

package enum HelperDispatch {
    /// Set once by a helper's `main` before anything is parsed; nil in `keyhaven`.
    nonisolated(unsafe) package static var worker: (any HelperWorker)?
    /// The command line as given, before the prompt sentinels were put in (they hold a NUL,
    /// which no `execv` argument can carry).
    nonisolated(unsafe) static var originalArguments: [String] = []

    /// The helper that does the certificate, key and import subcommands' work.
    package static let executableName = "keyhaven-pki"

    /// Runs `command`'s work: here when a worker is registered, else in `executable` (beside this one).
    static func run(_ command: any HelperCommand, executable: String = executableName) throws {
        if let worker {
            try worker.run(command)
            return
        }
        let path = siblingPath(executable)
        var argv: [UnsafeMutablePointer<CChar>?] = ([path] + originalArguments).map { strdup($0) } + [nil]
        execv(path, &argv)
        // Only reached when it could not be run.
        printError("keyhaven: \(type(of: command)._commandName) needs \(executable), "
                   + "installed beside keyhaven (\(path)): \(String(cString: strerror(errno)))")
        for pointer in argv { free(pointer) }
        throw ExitCode(1)
    }

    /// `executable` in the folder of the running `keyhaven`.
    private static func siblingPath(_ executableName: String) -> String {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let length = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard length > 0 else { return executableName }
        let executable = String(decoding: buffer.prefix(length).map { UInt8(bitPattern: $0) }, as: UTF8.self)
        guard let slash = executable.lastIndex(of: "/") else { return executableName }
        return String(executable[...slash]) + executableName
    }
}
