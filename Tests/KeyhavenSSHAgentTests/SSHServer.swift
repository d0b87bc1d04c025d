import Foundation
import KeychainTestSupport

/// An sshd the test starts on a loopback port, with its own configuration, host key, authorized
/// keys and certificate authority; logins are as the user running the test.
struct SSHServer {
    let folder: String
    let port: Int
    let pid: Int32
    /// The host key's public line and its fingerprint.
    let hostKeyLine: String
    let hostKeyFingerprint: String

    static let user = ProcessInfo.processInfo.environment["USER"] ?? String(cString: getpwuid(getuid())!.pointee.pw_name)

    /// Starts it; `authorizedKeys` are public key lines; `certificateAuthority` the CA's public key path.
    static func start(in folder: String, authorizedKeys: [String], certificateAuthority: String?) throws -> SSHServer {
        let hostKey = folder + "/host_ed25519"
        _ = try CommandRunner.execute("/usr/bin/ssh-keygen", ["-q", "-t", "ed25519", "-N", "", "-f", hostKey], environment: [:])
        try (authorizedKeys.joined(separator: "\n") + "\n").write(toFile: folder + "/authorized_keys", atomically: true, encoding: .utf8)
        // sshd as root needs its privilege separation folder.
        if getuid() == 0 { try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true) }
        for _ in 0..<20 {
            let port = Int.random(in: 20000..<60000)
            var config = """
                ListenAddress 127.0.0.1
                Port \(port)
                HostKey \(hostKey)
                PidFile \(folder)/sshd.pid
                AuthorizedKeysFile \(folder)/authorized_keys
                StrictModes no
                UsePAM no
                PasswordAuthentication no
                KbdInteractiveAuthentication no
                PubkeyAuthentication yes
                PermitRootLogin prohibit-password
                LogLevel VERBOSE

                """
            if let certificateAuthority { config += "TrustedUserCAKeys \(certificateAuthority)\n" }
            try config.write(toFile: folder + "/sshd_config", atomically: true, encoding: .utf8)
            let started = try CommandRunner.execute("/bin/sh", ["-c", "/usr/sbin/sshd -D -e -f '\(folder)/sshd_config' </dev/null "
                                                               + ">'\(folder)/sshd.log' 2>&1 & echo $!"], environment: [:])
            guard let pid = Int32(started.output.trimmingCharacters(in: .whitespacesAndNewlines)) else { continue }
            for _ in 0..<100 {
                usleep(50_000)
                let log = (try? String(contentsOfFile: folder + "/sshd.log", encoding: .utf8)) ?? ""
                if log.contains("Server listening on 127.0.0.1 port \(port)") {
                    let line = try String(contentsOfFile: hostKey + ".pub", encoding: .utf8).trimmingCharacters(in: .newlines)
                    let fingerprint = try CommandRunner.execute("/usr/bin/ssh-keygen", ["-l", "-f", hostKey + ".pub"], environment: [:])
                        .output.split(separator: " ")[1]
                    try "[127.0.0.1]:\(port) \(line)\n".write(toFile: folder + "/known_hosts", atomically: true, encoding: .utf8)
                    return SSHServer(folder: folder, port: port, pid: pid, hostKeyLine: line, hostKeyFingerprint: String(fingerprint))
                }
                if log.contains("Address already in use") || kill(pid, 0) != 0 { break }
            }
            kill(pid, SIGKILL)
        }
        throw CocoaError(.featureUnsupported, userInfo: [NSLocalizedDescriptionKey: "sshd did not start: "
                         + ((try? String(contentsOfFile: folder + "/sshd.log", encoding: .utf8)) ?? "")])
    }

    func stop() { kill(pid, SIGKILL) }

    /// `ssh` to this server with the agent at `agentSocket` only; the remote command's output.
    func login(agentSocket: String, environment: [String: String], command: String = "echo logged-in") throws -> CommandRunner.Result {
        try CommandRunner.execute("/usr/bin/ssh", ["-F", "/dev/null", "-o", "IdentityAgent=\(agentSocket)", "-o", "IdentityFile=none",
                                                   "-o", "UserKnownHostsFile=\(folder)/known_hosts", "-o", "StrictHostKeyChecking=yes",
                                                   "-o", "BatchMode=yes", "-o", "PreferredAuthentications=publickey",
                                                   "-o", "ConnectTimeout=20", "-p", String(port), "\(Self.user)@127.0.0.1", command],
                                  environment: environment)
    }
}
