import Foundation
import KeychainServices
import KeychainTestSupport
import Testing

/// `kSecAttrTokenIDSecureEnclave` keys made and used inside a real TPM 2.0 (swtpm) through a
/// private agent, checked against independent implementations: OpenSSL verifies the signatures,
/// Python's `cryptography` encrypts the ECIES messages and computes the other side's ECDH.
@Suite(.freshKeychain(), .serialized)
struct SecureEnclaveKeyTests {
    @Test("A Secure Enclave key: made in the TPM, signs (OpenSSL verifies), agrees and decrypts as an independent side expects, exports only its public key, and is found again by another process")
    func enclaveKeyWorks() throws {
        let tpm = try TestTPM()
        defer { tpm.remove() }
        let agent = try TestAgent.start(extraEnvironment: ["KEYHAVEN_TPM": tpm.tcti])
        defer { agent.stop() }
        let key = try Self.makeKey(tag: "se.sign")
        let attributes = try #require(SecKeyCopyAttributes(key) as? [String: Any])
        #expect(attributes[kSecAttrTokenID as String] as? String == kSecAttrTokenIDSecureEnclave as String)
        #expect(attributes[kSecValueData as String] == nil)

        // The private key never leaves: Apple's errSecParam; the public key exports as X9.63.
        var error: Unmanaged<CFError>?
        #expect(SecKeyCopyExternalRepresentation(key, &error) == nil)
        #expect(error.map { CFErrorGetCode($0.takeRetainedValue()) } == Int(errSecParam))
        let publicKey = try #require(SecKeyCopyPublicKey(key))
        let publicBytes = try #require(SecKeyCopyExternalRepresentation(publicKey, nil) as Data?)
        #expect(publicBytes.count == 65 && publicBytes.first == 0x04)

        // Signed in the TPM, verified by OpenSSL with the public key.
        let message = Data("a message signed by the TPM".utf8)
        let signature = try #require(SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message as CFData, nil) as Data?)
        #expect(try Self.opensslVerifies(signature, of: message, publicKey: publicBytes))
        #expect(SecKeyVerifySignature(publicKey, .ecdsaSignatureMessageX962SHA256, message as CFData, signature as CFData, nil))
        // A digest of another length is signed as ECDSA reads it on P-256 (SHA-384 truncated).
        let digest384 = Data((0..<48).map { UInt8($0) })
        let signature384 = try #require(SecKeyCreateSignature(key, .ecdsaSignatureDigestX962SHA384, digest384 as CFData, nil) as Data?)
        #expect(SecKeyVerifySignature(publicKey, .ecdsaSignatureDigestX962SHA384, digest384 as CFData, signature384 as CFData, nil))

        // ECIES and ECDH against Python's cryptography (OpenSSL underneath), not Keyhaven's own code.
        let peer = try Self.independentSide(recipient: publicBytes, plaintext: "sealed for the TPM key")
        for (algorithm, packet) in [(SecKeyAlgorithm.eciesEncryptionCofactorVariableIVX963SHA256AESGCM, peer.variableIVPacket),
                                    (.eciesEncryptionStandardVariableIVX963SHA256AESGCM, peer.variableIVPacket),
                                    (.eciesEncryptionStandardX963SHA256AESGCM, peer.zeroIVPacket)] {
            let plaintext = SecKeyCreateDecryptedData(key, algorithm, packet as CFData, nil) as Data?
            #expect(plaintext == Data("sealed for the TPM key".utf8), "\(algorithm.rawValue)")
        }
        let peerKey = try #require(SecKeyCreateWithData(peer.ecdhPublicKey as CFData, [kSecAttrKeyType: kSecAttrKeyTypeECSECPrimeRandom,
                                                                                     kSecAttrKeyClass: kSecAttrKeyClassPublic] as CFDictionary, nil))
        let parameters: [String: Any] = [SecKeyKeyExchangeParameter.requestedSize.rawValue as String: 32,
                                         SecKeyKeyExchangeParameter.sharedInfo.rawValue as String: Data("keyhaven-info".utf8)]
        error = nil
        let agreed = SecKeyCopyKeyExchangeResult(key, .ecdhKeyExchangeStandardX963SHA256, peerKey, parameters as CFDictionary, &error) as Data?
        #expect(agreed == peer.ecdhDerived, "\(String(describing: error?.takeRetainedValue()))")
        let raw = SecKeyCopyKeyExchangeResult(key, .ecdhKeyExchangeStandard, peerKey, [:] as CFDictionary, nil) as Data?
        #expect(raw == peer.ecdhRaw)

        // Another program finds the stored key, and signs with it once the item trusts it: the
        // item's access is checked at each use, the agent's as for any key.
        var runner = try CommandRunner()
        runner.extraEnvironment["XDG_RUNTIME_DIR"] = agent.runtime
        defer { try? FileManager.default.removeItem(atPath: runner.runtime) }
        let groups = try runner.run("access", "grant", "-T", HelperProcess.executable.path, "-G", "test.group.a")
        #expect(groups.status == 0, "\(groups.error)")
        let refused = HelperProcess.finish(try HelperProcess.start(["sign", "se.sign", "signed elsewhere"]))
        #expect(refused.0 != 0, "\(refused.1)")
        let trust = try runner.run("access", "grant", "-c", "keys", "-l", "se.sign", "-T", HelperProcess.executable.path)
        #expect(trust.status == 0, "\(trust.error)")
        let (status, output) = HelperProcess.finish(try HelperProcess.start(["sign", "se.sign", "signed elsewhere"]))
        #expect(status == 0, "\(output)")
        let elsewhere = Data(Self.bytes(hex: output))
        #expect(try Self.opensslVerifies(elsewhere, of: Data("signed elsewhere".utf8), publicKey: publicBytes))
    }

    @Test("A key not kept in the keychain works through the agent too, and is not in any keychain")
    func transientKey() throws {
        let tpm = try TestTPM()
        defer { tpm.remove() }
        let agent = try TestAgent.start(extraEnvironment: ["KEYHAVEN_TPM": tpm.tcti])
        defer { agent.stop() }
        let parameters: [String: Any] = [kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256,
                                         kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave]
        var error: Unmanaged<CFError>?
        let key = try #require(SecKeyCreateRandomKey(parameters as CFDictionary, &error), "\(String(describing: error?.takeRetainedValue()))")
        let message = Data("transient".utf8)
        let signature = try #require(SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message as CFData, nil) as Data?)
        #expect(SecKeyVerifySignature(try #require(SecKeyCopyPublicKey(key)), .ecdsaSignatureMessageX962SHA256, message as CFData,
                                      signature as CFData, nil))
        #expect(SecItemCopyMatching([kSecClass: kSecClassKey, kSecReturnRef: true] as CFDictionary, nil) == errSecItemNotFound)
    }

    @Test("A key from another TPM, or from this one after tpm2_clear, is refused with errSecDecode saying why; the item is kept")
    func foreignAndClearedTPM() throws {
        let first = try TestTPM()
        defer { first.remove() }
        var agent = try TestAgent.start(extraEnvironment: ["KEYHAVEN_TPM": first.tcti])
        let key = try Self.makeKey(tag: "se.moved")
        let message = Data("m".utf8) as CFData
        #expect(SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message, nil) != nil)
        agent.stop()

        let second = try TestTPM()
        defer { second.remove() }
        agent = try TestAgent.start(extraEnvironment: ["KEYHAVEN_TPM": second.tcti])
        let moved = try Self.findKey(tag: "se.moved")
        var error: Unmanaged<CFError>?
        #expect(SecKeyCreateSignature(moved, .ecdsaSignatureMessageX962SHA256, message, &error) == nil)
        let failure = try #require(error?.takeRetainedValue())
        #expect(CFErrorGetCode(failure) == Int(errSecDecode))
        #expect("\(failure)".contains("another TPM made it, or this TPM was cleared"), "\(failure)")
        agent.stop()

        // Back on the first TPM it works, until the TPM is cleared (a new owner seed).
        agent = try TestAgent.start(extraEnvironment: ["KEYHAVEN_TPM": first.tcti])
        #expect(SecKeyCreateSignature(try Self.findKey(tag: "se.moved"), .ecdsaSignatureMessageX962SHA256, message, nil) != nil)
        agent.stop()
        let clear = try first.tools("tpm2_clear")
        #expect(clear.status == 0, "\(clear.error)")
        agent = try TestAgent.start(extraEnvironment: ["KEYHAVEN_TPM": first.tcti])
        defer { agent.stop() }
        error = nil
        #expect(SecKeyCreateSignature(try Self.findKey(tag: "se.moved"), .ecdsaSignatureMessageX962SHA256, message, &error) == nil)
        #expect(error.map { CFErrorGetCode($0.takeRetainedValue()) } == Int(errSecDecode))
    }

    @Test("Without a TPM the call fails with errSecUnimplemented, as on a Mac without a Secure Enclave; other key types are errSecParam; nothing is stored")
    func noTPM() throws {
        let agent = try TestAgent.start(extraEnvironment: ["KEYHAVEN_TPM": "swtpm:host=127.0.0.1,port=\(try TestPostgres.freePort())"])
        defer { agent.stop() }
        var error: Unmanaged<CFError>?
        let parameters: [String: Any] = [kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256,
                                         kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave,
                                         kSecPrivateKeyAttrs as String: [kSecAttrIsPermanent as String: true]]
        #expect(SecKeyCreateRandomKey(parameters as CFDictionary, &error) == nil)
        #expect(error.map { CFErrorGetCode($0.takeRetainedValue()) } == Int(errSecUnimplemented))
        var rsa = parameters
        rsa[kSecAttrKeyType as String] = kSecAttrKeyTypeRSA
        rsa[kSecAttrKeySizeInBits as String] = 2048
        error = nil
        #expect(SecKeyCreateRandomKey(rsa as CFDictionary, &error) == nil)
        #expect(error.map { CFErrorGetCode($0.takeRetainedValue()) } == Int(errSecParam))
        #expect(SecItemCopyMatching([kSecClass: kSecClassKey] as CFDictionary, nil) == errSecItemNotFound)
    }

    // MARK: - Helpers

    static func makeKey(tag: String) throws -> SecKey {
        let access = try #require(SecAccessControlCreateWithFlags(nil, kSecAttrAccessibleWhenUnlockedThisDeviceOnly, .privateKeyUsage, nil))
        let parameters: [String: Any] = [
            kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256,
            kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave,
            kSecPrivateKeyAttrs as String: [kSecAttrIsPermanent as String: true, kSecAttrApplicationTag as String: Data(tag.utf8),
                                            kSecAttrLabel as String: tag,
                                            kSecAttrAccessControl as String: access],
        ]
        var error: Unmanaged<CFError>?
        return try #require(SecKeyCreateRandomKey(parameters as CFDictionary, &error), "\(String(describing: error?.takeRetainedValue()))")
    }

    static func findKey(tag: String) throws -> SecKey {
        var result: CFTypeRef?
        let status = SecItemCopyMatching([kSecClass: kSecClassKey, kSecAttrApplicationTag: Data(tag.utf8), kSecReturnRef: true] as CFDictionary,
                                         &result)
        #expect(status == errSecSuccess)
        return try #require(result as? SecKey)
    }

    /// `openssl dgst -verify` with the public key as a SubjectPublicKeyInfo (the fixed P-256 prefix).
    static func opensslVerifies(_ signature: Data, of message: Data, publicKey: Data) throws -> Bool {
        let folder = try TemporaryFolder.make(prefix: "keyhaven-se")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let spkiPrefix = bytes(hex: "3059301306072a8648ce3d020106082a8648ce3d030107034200")
        try (Data(spkiPrefix) + publicKey).write(to: URL(fileURLWithPath: folder + "/public.der"))
        try signature.write(to: URL(fileURLWithPath: folder + "/signature"))
        try message.write(to: URL(fileURLWithPath: folder + "/message"))
        let result = try CommandRunner.execute("/usr/bin/openssl", ["dgst", "-sha256", "-verify", folder + "/public.der", "-keyform", "DER",
                                                                     "-signature", folder + "/signature", folder + "/message"],
                                               environment: ["PATH": "/usr/bin:/bin"])
        return result.status == 0 && result.output.contains("Verified OK")
    }

    struct IndependentSide {
        var variableIVPacket: Data
        var zeroIVPacket: Data
        var ecdhPublicKey: Data
        var ecdhDerived: Data
        var ecdhRaw: Data
    }

    /// Apple's ECIES (X9.63 KDF with SHA-256 over the ephemeral public key, AES-128-GCM) and ECDH
    /// with the X9.63 KDF, written from Apple's documentation with Python's `cryptography`.
    static func independentSide(recipient: Data, plaintext: String) throws -> IndependentSide {
        let script = """
            import sys
            from cryptography.hazmat.primitives import hashes, serialization
            from cryptography.hazmat.primitives.asymmetric import ec
            from cryptography.hazmat.primitives.ciphers.aead import AESGCM
            from cryptography.hazmat.primitives.kdf.x963kdf import X963KDF
            point = lambda key: key.public_key().public_bytes(serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint)
            recipient = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), bytes.fromhex(sys.argv[1]))
            plaintext = sys.argv[2].encode()
            def packet(variable_iv):
                ephemeral = ec.generate_private_key(ec.SECP256R1())
                shared = ephemeral.exchange(ec.ECDH(), recipient)
                material = X963KDF(hashes.SHA256(), 32 if variable_iv else 16, point(ephemeral)).derive(shared)
                iv = material[16:] if variable_iv else bytes(16)
                return point(ephemeral) + AESGCM(material[:16]).encrypt(iv, plaintext, None)
            peer = ec.generate_private_key(ec.SECP256R1())
            shared = peer.exchange(ec.ECDH(), recipient)
            derived = X963KDF(hashes.SHA256(), 32, b"keyhaven-info").derive(shared)
            for value in (packet(True), packet(False), point(peer), derived, shared):
                print(value.hex())
            """
        let result = try CommandRunner.execute("/usr/bin/python3", ["-c", script, recipient.map { String(format: "%02x", $0) }.joined(), plaintext],
                                               environment: ["PATH": "/usr/bin:/bin"])
        let lines = result.output.split(separator: "\n").map { Data(bytes(hex: String($0))) }
        guard result.status == 0, lines.count == 5 else { throw TestTPMError("the independent side failed: \(result.error)") }
        return IndependentSide(variableIVPacket: lines[0], zeroIVPacket: lines[1], ecdhPublicKey: lines[2], ecdhDerived: lines[3], ecdhRaw: lines[4])
    }

    static func bytes(hex: String) -> [UInt8] {
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while let next = hex.index(index, offsetBy: 2, limitedBy: hex.endIndex), index != hex.endIndex {
            bytes.append(UInt8(hex[index..<next], radix: 16) ?? 0)
            index = next
        }
        return bytes
    }
}
