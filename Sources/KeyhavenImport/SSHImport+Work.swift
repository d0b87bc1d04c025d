#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ArgumentParser
import Foundation
import KeychainModel
import KeyhavenCLI
import KeyhavenSSHAgent

/// `keyhaven ssh import`'s work: each file through `ssh-add`, with this program as its askpass
/// (``SSHAskpass``), then looked for in the default keychain, so that a key added to an agent
/// that does not keep keys there is said to be not kept.
extension SSHImport: HelperWork {
    package func work() throws {
        var failed = false
        try perform("ssh import") { () throws(StoreError) in
            guard let sshAdd = programOnPath("ssh-add") else { throw StoreError(.invalidParameter, "OpenSSH's ssh-add is not on PATH") }
            guard ProcessInfo.processInfo.environment["SSH_AUTH_SOCK"].map({ !$0.isEmpty }) == true else {
                throw StoreError(.invalidParameter, "SSH_AUTH_SOCK names no agent: start keyhaven-ssh-agent --keychain (docs/ssh.md)")
            }
            let chosen = files.isEmpty ? SSHImport.defaultFiles() : files.map { URL(fileURLWithPath: $0).standardizedFileURL.path }
            guard !chosen.isEmpty else { throw StoreError(.itemNotFound, "no key files: ~/.ssh has no id_* with a .pub beside it") }
            let session = try Session.open()
            let keychain = try session.path(nil)
            for file in chosen {
                let outcome = SSHImport.add(file, sshAdd: sshAdd)
                if let problem = outcome.problem {
                    failed = true
                    printLine("\(file): not kept: \(problem)")
                    continue
                }
                let kept = try SSHImport.keptFingerprints(in: keychain, session)
                if let fingerprint = outcome.fingerprint, kept.contains(fingerprint) {
                    printLine("\(file): kept in the keychain as \(fingerprint)")
                } else {
                    failed = true
                    printLine("\(file): not kept: the agent took it but did not keep it in the keychain (is SSH_AUTH_SOCK keyhaven-ssh-agent --keychain?)")
                }
            }
        }
        if failed { throw ExitCode(1) }
    }

    /// `~/.ssh/id_*` private keys with their `.pub` beside them, in name order.
    static func defaultFiles() -> [String] {
        let folder = (ProcessInfo.processInfo.environment["HOME"] ?? NSHomeDirectory()) + "/.ssh"
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return names.filter { $0.hasPrefix("id_") && !$0.hasSuffix(".pub") && names.contains($0 + ".pub") }.sorted().map { folder + "/" + $0 }
    }

    /// Runs `ssh-add FILE` with this program answering its passphrase prompts: the key's
    /// fingerprint (from `ssh-keygen -l` of what ssh-add read), or why it failed.
    static func add(_ file: String, sshAdd: String) -> (fingerprint: String?, problem: String?) {
        guard FileManager.default.isReadableFile(atPath: file) else { return (nil, "no such readable file") }
        var environment = ProcessInfo.processInfo.environment
        environment["SSH_ASKPASS"] = SSHAskpass.executable
        environment["SSH_ASKPASS_REQUIRE"] = "force"
        environment[SSHAskpass.variable] = "1"
        let added = run(sshAdd, [file], environment: environment)
        guard added.status == 0 else {
            let said = added.error.split(separator: "\n").last.map(String.init) ?? "ssh-add failed"
            return (nil, said.isEmpty ? "ssh-add failed" : said)
        }
        // ssh-add says "Identity added: FILE (COMMENT)"; the fingerprint comes from the key's
        // public half, which ssh-keygen derives from the file (its .pub, or the key itself).
        let publicFile = FileManager.default.fileExists(atPath: file + ".pub") ? file + ".pub" : file
        guard let keygen = programOnPath("ssh-keygen") else { return (nil, "OpenSSH's ssh-keygen is not on PATH") }
        let listed = run(keygen, ["-l", "-E", "sha256", "-f", publicFile], environment: ProcessInfo.processInfo.environment)
        let fingerprint = listed.output.split(separator: " ").dropFirst().first.map(String.init)
        return (fingerprint, fingerprint == nil ? "its fingerprint could not be read" : nil)
    }

    /// The fingerprints of the SSH keys kept in `keychain`.
    static func keptFingerprints(in keychain: String, _ session: Session) throws(StoreError) -> Set<String> {
        let found = try session.items(matching: SSHKeyItem.query(), in: keychain, caller: Caller(accessGroups: [SSHKeyItem.group]), withSecrets: false)
        return Set(found.compactMap { SSHKeyItem(attributes: $0.attributes)?.account })
    }

    private static func run(_ program: String, _ arguments: [String], environment: [String: String]) -> (status: Int32, output: String, error: String) {
        let process = Process(), output = Pipe(), error = Pipe()
        process.executableURL = URL(fileURLWithPath: program)
        process.arguments = arguments
        process.environment = environment
        process.standardOutput = output
        process.standardError = error
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { return (127, "", "\(program) could not be started") }
        let out = output.fileHandleForReading.readDataToEndOfFile(), err = error.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
    }
}
