import Foundation
import KeyhavenSSHAgent
import Testing

/// The requests OpenSSH's `ssh-add` sends, read back to what its key files hold.
struct AgentRequestTests {
    /// The fields of a public key blob (RFC 4253, section 6.6).
    func blobFields(_ blob: [UInt8], count: Int) throws -> [[UInt8]] {
        var reader = SSHReader(blob)
        let fields = try (0..<count).map { _ in try reader.string() }
        try reader.finish()
        return fields
    }

    @Test("ssh-add -c -t 90 of each key type ssh-keygen makes: the key, its comment, a lifetime and confirmation", arguments: [
        ("ed25519", nil), ("ecdsa", 256), ("ecdsa", 384), ("ecdsa", 521), ("rsa", 2048),
    ] as [(String, Int?)])
    func addConstrained(type: String, bits: Int?) throws {
        let capture = try SSHAddCapture()
        defer { capture.remove() }
        let key = try capture.makeKey(type: type, bits: bits, comment: "\(type) for git")
        let requests = try capture.requests(["-c", "-t", "90", key])
        #expect(requests.count == 1)
        let request = try AgentRequest(message: try #require(requests.first))
        guard case .addIdentity(let added) = request else { Issue.record("not an add: \(request)"); return }
        #expect(added.comment == "\(type) for git")
        #expect(added.constraints.contains(.lifetime(seconds: 90)) && added.constraints.contains(.confirm) && added.constraints.count == 2)
        let blob = try capture.publicBlob(key)
        switch added.key {
        case .ed25519(let publicKey, let secret):
            #expect(added.keyType == "ssh-ed25519")
            #expect(try blobFields(blob, count: 2)[1] == publicKey)
            #expect(secret.withBytes { Array($0.suffix(32)) } == publicKey)
        case .ecdsa(let curve, let point, let scalar):
            #expect(added.keyType == "ecdsa-sha2-\(curve)" && curve == "nistp\(bits ?? 0)")
            #expect(try blobFields(blob, count: 3)[2] == point)
            #expect(scalar.count > 0 && scalar.count <= ((bits ?? 0) + 7) / 8)
        case .rsa(let modulus, let exponent, _, _, let p, let q):
            #expect(added.keyType == "ssh-rsa")
            let fields = try blobFields(blob, count: 3)
            #expect(Array(fields[1].drop { $0 == 0 }) == exponent && Array(fields[2].drop { $0 == 0 }) == modulus)
            #expect(p.count == 128 && q.count == 128)
        case .certified:
            Issue.record("a plain key read as a certificate")
        }
        #expect(!"\(added.key)".contains("\(blob)"), "a key's description shows no bytes")
    }

    @Test("ssh-add -l, -d FILE.pub and -D: list, remove one by its blob, remove all")
    func listAndRemove() throws {
        let capture = try SSHAddCapture()
        defer { capture.remove() }
        let key = try capture.makeKey(type: "ed25519", comment: "work")
        let list = try capture.requests(["-l"])
        #expect(list.count == 1)
        if case .requestIdentities = try AgentRequest(message: try #require(list.first)) {} else { Issue.record("-l: \(list)") }
        let remove = try capture.requests(["-d", key + ".pub"])
        let removal = try AgentRequest(message: try #require(remove.first))
        guard case .removeIdentity(let blob) = removal else { Issue.record("-d: \(removal)"); return }
        #expect(blob == (try capture.publicBlob(key)))
        let all = try capture.requests(["-D"])
        if case .removeAllIdentities = try AgentRequest(message: try #require(all.first)) {} else { Issue.record("-D: \(all)") }
    }

    @Test("An add of a key type the agent does not hold, or with an unknown constraint, is refused as unsupported")
    func unsupported() {
        var dsa = SSHWriter()
        dsa.byte(MessageType.addIdentity)
        dsa.text("ssh-dss")
        #expect(throws: SSHAgentError.self) { try AgentRequest(message: dsa.bytes) }
        var constrained = SSHWriter()
        constrained.byte(MessageType.addIdentityConstrained)
        constrained.text("ssh-ed25519")
        constrained.string([UInt8](repeating: 1, count: 32))
        constrained.string([UInt8](repeating: 2, count: 64))
        constrained.text("comment")
        constrained.byte(255)
        constrained.text("made-up@example.com")
        do {
            _ = try AgentRequest(message: constrained.bytes)
            Issue.record("an unknown constraint was taken")
        } catch {
            #expect(error.code == .unsupported)
        }
    }
}
