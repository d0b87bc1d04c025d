import Foundation
import KeychainTestSupport
import Testing

/// `keyhaven` leaves the certificate and key subcommands to `keyhaven-pki`, so that it links none
/// of their libraries (docs/benchmarks.md).
@Suite(.freshKeychain())
struct HelperDispatchTests {
    /// The shared libraries `ldd` lists for a built executable.
    func libraries(_ name: String) throws -> String {
        let file = FileManager.default.temporaryDirectory.appendingPathComponent(UUID().uuidString).path
        defer { try? FileManager.default.removeItem(atPath: file) }
        let path = CommandRunner.products.appendingPathComponent(name).path
        #expect(try Shell.run("/bin/sh", ["-c", "ldd '\(path)' > '\(file)'"]) == 0)
        return try String(contentsOfFile: file, encoding: .utf8)
    }

    @Test("keyhaven links no libcrypto; keyhaven-pki, which does the PKCS#12 work, does")
    func linkage() throws {
        #expect(!(try libraries("keyhaven")).contains("libcrypto"))
        #expect(try libraries("keyhaven-pki").contains("libcrypto"))
    }

    @Test("keyhaven without keyhaven-pki beside it says so for a PKI subcommand (exit 1) and still does the rest")
    func missingWorker() throws {
        let folder = try TemporaryFolder.make(prefix: "keyhaven-alone")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let alone = folder + "/keyhaven"
        try ExecutableFile.copy(CommandRunner.products.appendingPathComponent("keyhaven").path, to: alone)
        let runtime = try TemporaryFolder.make(prefix: "keyhaven-runtime")
        defer { try? FileManager.default.removeItem(atPath: runtime) }
        var environment = ProcessInfo.processInfo.environment
        environment["KEYHAVEN_HOME"] = TestHome.current!.path
        environment["XDG_RUNTIME_DIR"] = runtime
        environment["KEYHAVEN_AGENT"] = "off"
        let log = folder + "/log"
        let status = try Shell.run("/bin/sh", ["-c", "'\(alone)' find-certificate -a 2> '\(log)'"], environment: environment)
        #expect(status == 1)
        let message = try String(contentsOfFile: log, encoding: .utf8)
        #expect(message.contains("find-certificate needs keyhaven-pki, installed beside keyhaven (")
                && message.contains("keyhaven-alone") && message.contains("/keyhaven-pki): No such file or directory"), "\(message)")
        #expect(try Shell.run(alone, ["--help"], environment: environment) == 0)
    }

    @Test("A PKI subcommand's help and option errors come from keyhaven itself")
    func helpAndErrors() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        let help = try k.run("export", "--help")
        #expect(help.status == 0 && help.output.contains("USAGE: keyhaven export [-k <k>] [-t <t>]"), "\(help.output)")
        let bad = try k.run("export", "-t", "nothing")
        #expect(bad.status == 64 && bad.error.contains("unknown type nothing"), "\(bad.error)")
    }
}
