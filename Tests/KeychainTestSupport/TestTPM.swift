import Foundation

/// A throw-away TPM 2.0 for one test: `swtpm` (a real TPM 2.0 implementation, libtpms) on two
/// free loopback ports with its state in a new folder, started already powered on and with
/// `TPM2_Startup` done. `stop()` ends it; `start()` brings the same TPM back (its state kept), and
/// `remove()` deletes the folder. Debian's `swtpm` and `tpm2-tools` (`scripts/bootstrap`).
public final class TestTPM: @unchecked Sendable {
    public let folder: String
    /// The command port; swtpm's control port is the next one, as tpm2-tss's swtpm TCTI expects.
    public let port: Int
    private var process: Process?

    public static var isAvailable: Bool {
        FileManager.default.isExecutableFile(atPath: "/usr/bin/swtpm") && FileManager.default.isExecutableFile(atPath: "/usr/bin/tpm2_getcap")
    }

    /// The TCTI that reaches it, in tpm2-tss's syntax (`KEYHAVEN_TPM`, `TPM2TOOLS_TCTI`).
    public var tcti: String { "swtpm:host=127.0.0.1,port=\(port)" }

    public init() throws {
        guard Self.isAvailable else { throw TestTPMError("swtpm and tpm2-tools are not installed (scripts/bootstrap)") }
        folder = try TemporaryFolder.make(prefix: "keyhaven-tpm")
        port = try Self.freePortPair()
        try start()
    }

    deinit { stop() }

    public func start() throws {
        // Not a daemon: Foundation's Process notices a child's end by a descriptor the daemon
        // would inherit and keep. swtpm runs as this object's child and writes to its log alone.
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/swtpm")
        process.arguments = ["socket", "--tpm2", "--tpmstate", "dir=\(folder)",
                             "--server", "type=tcp,port=\(port),bindaddr=127.0.0.1", "--ctrl", "type=tcp,port=\(port + 1),bindaddr=127.0.0.1",
                             "--flags", "not-need-init,startup-clear", "--log", "file=\(folder)/swtpm.log"]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
        // It answers once it listens.
        for _ in 0..<100 where (try? tools("tpm2_getcap", "properties-fixed").status) != 0 { Thread.sleep(forTimeInterval: 0.05) }
    }

    /// Ends swtpm (its state stays in the folder).
    public func stop() {
        guard let process, process.isRunning else { return }
        // SIGKILL: a child of the test inherits its blocked signals, SIGTERM among them. swtpm
        // writes its permanent state as each command changes it, so nothing is lost.
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        self.process = nil
    }

    public func remove() {
        stop()
        try? FileManager.default.removeItem(atPath: folder)
    }

    /// Runs a tpm2-tools command against this TPM (while no other program holds it: swtpm serves
    /// one connection at a time).
    @discardableResult
    public func tools(_ command: String, _ arguments: String...) throws -> CommandRunner.Result {
        try CommandRunner.execute("/usr/bin/" + command, arguments, environment: ["PATH": "/usr/bin:/bin", "TPM2TOOLS_TCTI": tcti])
    }

    /// A free port whose next port is free too.
    static func freePortPair() throws -> Int {
        for _ in 0..<50 {
            let port = try TestPostgres.freePort()
            guard port < 65_535 else { continue }
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            address.sin_port = UInt16(port + 1).bigEndian
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
            }
            if bound { return port }
        }
        throw TestTPMError("no two free ports in a row")
    }
}

public struct TestTPMError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
