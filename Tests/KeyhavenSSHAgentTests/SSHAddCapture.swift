import Foundation
import KeychainTestSupport

/// OpenSSH's own `ssh-add`, run against a socket that records each request it is sent and answers
/// each with SSH_AGENT_SUCCESS: what a real client puts on the wire, for the parser to read.
struct SSHAddCapture {
    let folder: String

    init() throws { folder = try TemporaryFolder.make(prefix: "keyhaven-ssh-add") }

    func remove() { try? FileManager.default.removeItem(atPath: folder) }

    private static let recorder = """
        import socket, sys
        path, folder = sys.argv[1], sys.argv[2]
        server = socket.socket(socket.AF_UNIX)
        server.bind(path)
        server.listen(1)
        open(folder + "/ready", "w").close()
        count = 0
        while True:
            client, _ = server.accept()
            while True:
                head = client.recv(4, socket.MSG_WAITALL)
                if len(head) < 4:
                    break
                body = client.recv(int.from_bytes(head, "big"), socket.MSG_WAITALL)
                with open("%s/request-%d" % (folder, count), "wb") as out:
                    out.write(body)
                count += 1
                client.sendall(b"\\x00\\x00\\x00\\x01\\x06")
            client.close()
        """

    /// Makes a key with `ssh-keygen` (no passphrase); the private key file's path.
    func makeKey(type: String, bits: Int? = nil, comment: String) throws -> String {
        let path = folder + "/id_\(type)\(bits.map { "_\($0)" } ?? "")"
        let result = try CommandRunner.execute("/usr/bin/ssh-keygen", ["-q", "-t", type, "-N", "", "-C", comment, "-f", path]
                                               + (bits.map { ["-b", String($0)] } ?? []), environment: ["PATH": "/usr/bin:/bin"])
        guard result.status == 0 else { throw CocoaError(.fileWriteUnknown) }
        return path
    }

    /// The public key blob of `path.pub`.
    func publicBlob(_ path: String) throws -> [UInt8] {
        let line = try String(contentsOfFile: path + ".pub", encoding: .utf8)
        let fields = line.split(separator: " ")
        guard fields.count >= 2, let blob = Data(base64Encoded: String(fields[1])) else { throw CocoaError(.fileReadCorruptFile) }
        return Array(blob)
    }

    /// Runs `ssh-add arguments`; the request bodies it sent, in order.
    func requests(_ arguments: [String]) throws -> [[UInt8]] {
        let socket = folder + "/agent.sock"
        try? FileManager.default.removeItem(atPath: socket)
        try? FileManager.default.removeItem(atPath: folder + "/ready")
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] where name.hasPrefix("request-") {
            try? FileManager.default.removeItem(atPath: folder + "/" + name)
        }
        let server = Process()
        server.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        server.arguments = ["-c", Self.recorder, socket, folder]
        try server.run()
        // SIGKILL: a child of the test process inherits its blocked signals, SIGTERM among them.
        defer { kill(server.processIdentifier, SIGKILL); server.waitUntilExit() }
        let deadline = Date().addingTimeInterval(10)
        while !FileManager.default.fileExists(atPath: folder + "/ready"), Date() < deadline { usleep(10_000) }
        _ = try CommandRunner.execute("/usr/bin/ssh-add", arguments,
                                      environment: ["PATH": "/usr/bin:/bin", "HOME": folder, "SSH_AUTH_SOCK": socket])
        var requests: [[UInt8]] = []
        while let data = FileManager.default.contents(atPath: folder + "/request-\(requests.count)") { requests.append(Array(data)) }
        return requests
    }
}
