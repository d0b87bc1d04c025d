import Crypto
import Foundation
import KeychainKeys
import Testing

/// The key operations behind `SecKey`, called directly.
@Suite("Asymmetric keys")
struct AsymmetricKeyTests {
    static let kinds: [KeyKind] = [.ec(.p256), .ec(.p384), .ec(.p521), .rsa(bits: 2048)]
    static let message = Array("the message signed".utf8)

    static func algorithm(_ name: String) throws -> KeyAlgorithm {
        try #require(KeyAlgorithm(appleName: name))
    }

    @Test("A generated key is private and of its kind; its public half has its public bytes and is, as on Apple platforms, another key", arguments: kinds)
    func generated(kind: KeyKind) throws {
        let key = try AsymmetricKey.generate(kind)
        #expect(key.isPrivate)
        #expect(key.kind == kind)
        #expect(!key.publicKey.isPrivate)
        #expect(key.publicKey.publicBytes == key.publicBytes)
        // Apple's CFEqual on keys: a private key and its public half are different keys.
        #expect(!key.publicKey.isSameKey(as: key))
        #expect(key.isSameKey(as: key) && key.publicKey.isSameKey(as: key.publicKey))
        #expect(!(try AsymmetricKey.generate(kind)).isSameKey(as: key))
        #expect(key.applicationLabel == Data(Insecure.SHA1.hash(data: key.publicBytes)))
    }

    @Test("A signature verifies with the public half and fails once a byte of the message or the signature changes",
          arguments: [("algid:sign:ECDSA:message-X962:SHA256", KeyKind.ec(.p256)), ("algid:sign:ECDSA:message-RFC4754:SHA384", .ec(.p384)),
                      ("algid:sign:ECDSA:message-X962:SHA512", .ec(.p521)), ("algid:sign:RSA:message-PKCS1v15:SHA256", .rsa(bits: 2048)),
                      ("algid:sign:RSA:message-PSS:SHA256:SHA256:32", .rsa(bits: 2048))])
    func signAndVerify(name: String, kind: KeyKind) throws {
        let algorithm = try Self.algorithm(name)
        let key = try AsymmetricKey.generate(kind)
        let signature = try key.sign(algorithm, Self.message)
        try key.publicKey.verify(algorithm, Self.message, signature: signature)
        var changed = Self.message
        changed[0] ^= 1
        #expect(throws: KeyError.self) { try key.publicKey.verify(algorithm, changed, signature: signature) }
        var forged = signature
        forged[forged.count / 2] ^= 1
        do {
            try key.publicKey.verify(algorithm, Self.message, signature: forged)
            Issue.record("a changed signature verified")
        } catch {
            #expect(error.code == .verificationFailed || error.code == .invalidParameter)
        }
    }

    @Test("A public key cannot sign or decrypt, and an algorithm of another family is unsupported")
    func wrongKeyForOperation() throws {
        let key = try AsymmetricKey.generate(.ec(.p256))
        let (ecdsa, rsa) = (try Self.algorithm("algid:sign:ECDSA:message-X962:SHA256"), try Self.algorithm("algid:sign:RSA:message-PKCS1v15:SHA256"))
        #expect(throws: KeyError.self) { _ = try key.publicKey.sign(ecdsa, Self.message) }
        do {
            _ = try key.sign(rsa, Self.message)
            Issue.record("an EC key signed with RSA")
        } catch {
            #expect(error.code == .unsupportedAlgorithm)
        }
    }

    @Test("Apple's external representation round-trips, and an EC private key whose public point is not its scalar's is refused",
          arguments: kinds)
    func externalRepresentation(kind: KeyKind) throws {
        let key = try AsymmetricKey.generate(kind)
        let bytes = key.withExternalRepresentation { $0 }
        let read = try AsymmetricKey(externalRepresentation: bytes, keyType: kind.appleKeyType, isPrivate: true)
        #expect(read.isSameKey(as: key) && read.isPrivate)
        let publicRead = try AsymmetricKey(externalRepresentation: Array(key.publicBytes), keyType: kind.appleKeyType, isPrivate: false)
        #expect(publicRead.isSameKey(as: key.publicKey) && !publicRead.isPrivate)
        guard case .ec(let curve) = kind else { return }
        #expect(bytes.count == curve.privateByteCount)
        let other = try AsymmetricKey.generate(kind)
        // Another key's public point with this key's scalar.
        let mixed = Array(other.publicBytes) + bytes.suffix(curve.coordinateByteCount)
        do {
            _ = try AsymmetricKey(externalRepresentation: mixed, keyType: kind.appleKeyType, isPrivate: true)
            Issue.record("a mismatched EC private key was accepted")
        } catch {
            #expect(error.code == .invalidParameter)
        }
    }

    @Test("ECDH agrees both ways; the X9.63 KDF needs a size and gives that many bytes")
    func keyExchange() throws {
        let (alice, bob) = (try AsymmetricKey.generate(.ec(.p256)), try AsymmetricKey.generate(.ec(.p256)))
        let raw = try Self.algorithm("algid:keyexchange:ECDH")
        let one = try alice.exchange(raw, with: bob.publicKey, requestedSize: nil, sharedInfo: [])
        let two = try bob.exchange(raw, with: alice.publicKey, requestedSize: nil, sharedInfo: [])
        #expect(one == two && one.count == 32)
        let derived = try Self.algorithm("algid:keyexchange:ECDH:KDFX963:SHA256")
        let key = try alice.exchange(derived, with: bob.publicKey, requestedSize: 42, sharedInfo: [1, 2])
        #expect(key.count == 42)
        #expect(key == (try bob.exchange(derived, with: alice.publicKey, requestedSize: 42, sharedInfo: [1, 2])))
        #expect(throws: KeyError.self) { _ = try alice.exchange(derived, with: bob.publicKey, requestedSize: nil, sharedInfo: []) }
        #expect(throws: KeyError.self) {
            _ = try alice.exchange(raw, with: try AsymmetricKey.generate(.ec(.p384)).publicKey, requestedSize: nil, sharedInfo: [])
        }
    }

    @Test("Apple's ECIES: ephemeral key, ciphertext and tag; only the recipient decrypts, and a changed byte fails",
          arguments: ["algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM", "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV",
                      "algid:encrypt:ECIES:ECDH:KDFX963:SHA256:AESGCM"])
    func ecies(name: String) throws {
        let algorithm = try Self.algorithm(name)
        let recipient = try AsymmetricKey.generate(.ec(.p256))
        let plaintext = Array("for the recipient only".utf8)
        let sealed = try recipient.publicKey.encrypt(algorithm, plaintext)
        #expect(sealed.count == 65 + plaintext.count + 16)
        #expect(try recipient.decrypt(algorithm, sealed) == plaintext)
        var changed = sealed
        changed[70] ^= 1
        #expect(throws: KeyError.self) { _ = try recipient.decrypt(algorithm, changed) }
        #expect(throws: KeyError.self) { _ = try AsymmetricKey.generate(.ec(.p256)).decrypt(algorithm, sealed) }
        #expect(throws: KeyError.self) { _ = try recipient.decrypt(algorithm, Array(sealed.prefix(40))) }
    }

    @Test("RSA OAEP and PKCS#1 encryption round-trip; a ciphertext for another key does not decrypt")
    func rsaEncryption() throws {
        let key = try AsymmetricKey.generate(.rsa(bits: 2048))
        for name in ["algid:encrypt:RSA:OAEP:SHA256", "algid:encrypt:RSA:PKCS1"] {
            let algorithm = try Self.algorithm(name)
            let sealed = try key.publicKey.encrypt(algorithm, Array("short".utf8))
            #expect(sealed.count == 256)
            #expect(try key.decrypt(algorithm, sealed) == Array("short".utf8))
            #expect(throws: KeyError.self) { _ = try AsymmetricKey.generate(.rsa(bits: 2048)).decrypt(algorithm, sealed) }
        }
    }

    @Test("Apple's algorithm names parse to what they say; names Keyhaven does not implement parse to nothing")
    func algorithmNames() {
        #expect(KeyAlgorithm(appleName: "algid:sign:ECDSA:digest-X962") == .ecdsa(.digest(nil), raw: false))
        #expect(KeyAlgorithm(appleName: "algid:sign:ECDSA:RFC4754") == .ecdsa(.digest(nil), raw: true))
        #expect(KeyAlgorithm(appleName: "algid:sign:ECDSA:message-X962:SHA256") == .ecdsa(.message(.sha256), raw: false))
        #expect(KeyAlgorithm(appleName: "algid:keyexchange:ECDHC:KDFX963:SHA384") == .ecdh(kdf: .sha384))
        for unknown in ["", "algid", "algid:sign:RSA:raw", "algid:sign:ECDSA:message-X962:MD5", "algid:sign:ECDSA:message-X962",
                        "sign:ECDSA:digest-X962", "algid:sign:ECDSA:digest-X962:SHA999"] {
            #expect(KeyAlgorithm(appleName: unknown) == nil, "\(unknown)")
        }
    }
}
