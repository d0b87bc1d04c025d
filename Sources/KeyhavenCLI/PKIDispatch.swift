#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ArgumentParser

/// A subcommand whose work needs certificates and keys (X.509, PKCS#12, key encodings:
/// swift-certificates, swift-crypto and OpenSSL's libcrypto). Its options live here, so `keyhaven`
/// parses, validates and documents it; its work lives in `keyhaven-pki`, a second executable
/// installed beside `keyhaven`, which `keyhaven` runs in its place (`execv`, same arguments).
///
/// Why: linking those libraries made every `keyhaven` process a third slower to start
/// (docs/benchmarks.md, "The command"), and password look-ups in
/// scripts are what the command runs most.
package protocol PKICommand: ParsableCommand {}

/// The work of the PKI subcommands, registered by `keyhaven-pki` before it parses.
package protocol PKIWorker: Sendable {
    func run(_ command: any PKICommand) throws
}

package enum PKIDispatch {
    /// Set once by `keyhaven-pki`'s `main` before anything is parsed; nil in `keyhaven`.
    nonisolated(unsafe) package static var worker: (any PKIWorker)?
    /// The command line as given, before the prompt sentinels were put in (they hold a NUL,
    /// which no `execv` argument can carry).
    nonisolated(unsafe) static var originalArguments: [String] = []

    /// The name of the executable that does the PKI subcommands' work.
    package static let executableName = "keyhaven-pki"

    /// Runs `command`'s work: here when a worker is registered, else in `executable` (beside this one).
    static func run(_ command: any PKICommand, executable: String = executableName) throws {
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
