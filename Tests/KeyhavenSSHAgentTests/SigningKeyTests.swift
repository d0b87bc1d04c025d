import Crypto
import Foundation
import KeyhavenSSHAgent
import KeychainTestSupport
import Testing
import _CryptoExtras

/// Keys made from what `ssh-add` sends: named by the blob the key file's `.pub` holds, and signing
/// what swift-crypto's public keys (from that blob) verify.
struct SigningKeyTests {
    func added(_ request: [UInt8]) throws -> AgentRequest.AddedKey {
        guard case .addIdentity(let added) = try AgentRequest(message: request) else { throw SSHAgentError(.malformed, "not an add") }
        return added
    }

    func fields(_ blob: [UInt8]) throws -> [[UInt8]] {
        var reader = SSHReader(blob)
        var fields: [[UInt8]] = []
        while !reader.isAtEnd { fields.append(try reader.string()) }
        return fields
    }

    /// Whether `signature` (an SSH signature blob) verifies over `data` with the key of `blob`.
    func verifies(_ signature: [UInt8], data: [UInt8], blob: [UInt8]) throws -> Bool {
        let parts = try fields(signature)
        let key = try fields(blob)
        let name = String(decoding: parts[0], as: UTF8.self)
        switch name {
        case "ssh-ed25519":
            return try Curve25519.Signing.PublicKey(rawRepresentation: key[1]).isValidSignature(parts[1], for: data)
        case "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521":
            var inner = SSHReader(parts[1])
            let size = ["ecdsa-sha2-nistp256": 32, "ecdsa-sha2-nistp384": 48, "ecdsa-sha2-nistp521": 66][name]!
            let raw = try [inner.mpint(), inner.mpint()].flatMap { [UInt8](repeating: 0, count: size - $0.count) + $0 }
            switch size {
            case 32: return try P256.Signing.PublicKey(x963Representation: key[2]).isValidSignature(.init(rawRepresentation: raw), for: data)
            case 48: return try P384.Signing.PublicKey(x963Representation: key[2]).isValidSignature(.init(rawRepresentation: raw), for: data)
            default: return try P521.Signing.PublicKey(x963Representation: key[2]).isValidSignature(.init(rawRepresentation: raw), for: data)
            }
        case "rsa-sha2-512", "rsa-sha2-256":
            let publicKey = try _RSA.Signing.PublicKey(n: key[2], e: key[1])
            let signature = _RSA.Signing.RSASignature(rawRepresentation: parts[1])
            return name == "rsa-sha2-512"
                ? publicKey.isValidSignature(signature, for: SHA512.hash(data: data), padding: .insecurePKCS1v1_5)
                : publicKey.isValidSignature(signature, for: SHA256.hash(data: data), padding: .insecurePKCS1v1_5)
        default:
            return false
        }
    }

    @Test("Each key type ssh-keygen makes: the key's blob is its .pub's, and its signatures verify with that key", arguments: [
        ("ed25519", nil, 0), ("ecdsa", 256, 0), ("ecdsa", 384, 0), ("ecdsa", 521, 0), ("rsa", 2048, 4), ("rsa", 3072, 2),
    ] as [(String, Int?, UInt32)])
    func signs(type: String, bits: Int?, flags: UInt32) throws {
        let capture = try SSHAddCapture()
        defer { capture.remove() }
        let file = try capture.makeKey(type: type, bits: bits, comment: "signer")
        let key = try SSHSigningKey(try added(try #require(capture.requests([file]).first)).key)
        let blob = try capture.publicBlob(file)
        #expect(key.publicBlob == blob)
        let data = Array("session identifier and user auth request".utf8)
        let signature = try key.signature(for: data, flags: flags)
        #expect(try verifies(signature, data: data, blob: blob))
        #expect(try !verifies(signature, data: data + [0], blob: blob))
        if type == "rsa" {
            #expect(String(decoding: try fields(signature)[0], as: UTF8.self) == (flags == 4 ? "rsa-sha2-512" : "rsa-sha2-256"))
        }
    }

    @Test("A key with its certificate beside it: ssh-add sends both, and the certificate's key is named by the certificate and signs")
    func certificate() throws {
        let capture = try SSHAddCapture()
        defer { capture.remove() }
        let authority = try capture.makeKey(type: "ecdsa", bits: 384, comment: "ca")
        for (type, bits) in [("ed25519", nil), ("ecdsa", 256), ("rsa", 2048)] as [(String, Int?)] {
            let file = try capture.makeKey(type: type, bits: bits, comment: "user")
            let signed = try CommandRunner.execute("/usr/bin/ssh-keygen", ["-q", "-s", authority, "-I", "user", "-n", "user", file + ".pub"],
                                                   environment: ["PATH": "/usr/bin:/bin"])
            #expect(signed.status == 0, "\(signed)")
            let requests = try capture.requests([file])
            #expect(requests.count == 2, "the key, then its certificate")
            let certified = try added(try #require(requests.last))
            #expect(certified.keyType.hasSuffix("-cert-v01@openssh.com"))
            let key = try SSHSigningKey(certified.key)
            let line = try String(contentsOfFile: file + "-cert.pub", encoding: .utf8).split(separator: " ")
            #expect(key.publicBlob == Array(Data(base64Encoded: String(line[1])) ?? Data()))
            let plain = try SSHSigningKey(try added(requests[0]).key)
            let data = Array("to sign".utf8)
            #expect(try verifies(try key.signature(for: data, flags: 4), data: data, blob: plain.publicBlob))
        }
    }

    @Test("A private half that is not its public half's is refused")
    func mismatch() throws {
        let capture = try SSHAddCapture()
        defer { capture.remove() }
        let one = try added(try #require(capture.requests([try capture.makeKey(type: "ed25519", comment: "one")]).first))
        let two = try added(try #require(capture.requests([try capture.makeKey(type: "ecdsa", bits: 256, comment: "two")]).first))
        guard case .ed25519(_, let secret) = one.key, case .ecdsa(let curve, _, let scalar) = two.key else { Issue.record("key types"); return }
        #expect(throws: SSHAgentError.self) { try SSHSigningKey(.ed25519(publicKey: [UInt8](repeating: 9, count: 32), secret: secret)) }
        #expect(throws: SSHAgentError.self) { try SSHSigningKey(.ecdsa(curve: curve, publicPoint: [4] + [UInt8](repeating: 1, count: 64), scalar: scalar)) }
    }
}
