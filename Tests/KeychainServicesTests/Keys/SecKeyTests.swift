import Crypto
import Foundation
import KeychainServices
import KeychainTestSupport
import Testing

/// SecKey in memory: Apple's documented flows, representations, every supported algorithm,
/// and Apple's errors.
@Suite(.freshKeychain())
struct SecKeyTests {
    /// Key types by Apple's values (73: EC, 42: RSA) and sizes.
    static let kinds: [(String, Int)] = [("73", 256), ("73", 384), ("73", 521), ("42", 2048)]

    @Test("Apple's example: create a key, sign, verify with the exported public key", arguments: kinds)
    func signAndVerifyWithExportedPublicKey(_ typeName: String, _ bits: Int) throws {
        let type = NSString(string: typeName)
        let privateKey = try KeyTest.randomKey(type, bits)
        let publicKey = try #require(SecKeyCopyPublicKey(privateKey))
        let algorithm: SecKeyAlgorithm = (type as String) == "42" ? .rsaSignatureMessagePKCS1v15SHA256 : .ecdsaSignatureMessageX962SHA256
        #expect(SecKeyIsAlgorithmSupported(privateKey, .sign, algorithm))
        let message = Data("a message to sign".utf8)
        var error: Unmanaged<CFError>?
        let signature = try #require(SecKeyCreateSignature(privateKey, algorithm, message as CFData, &error))
        let exported = try KeyTest.data(publicKey)
        let imported = try KeyTest.key(exported, type: type, isPrivate: false)
        #expect(SecKeyVerifySignature(imported, algorithm, message as CFData, signature, &error))
        #expect(!SecKeyVerifySignature(imported, algorithm, Data("another message".utf8) as CFData, signature, &error))
        #expect(KeyTest.status(error)?.code == -67808)  // errSecVerifyFailed
        #expect(imported == publicKey)
        #expect(imported != privateKey)
    }

    @Test("External representations have Apple's sizes and round-trip", arguments: kinds)
    func externalRepresentations(_ typeName: String, _ bits: Int) throws {
        let type = NSString(string: typeName)
        let privateKey = try KeyTest.randomKey(type, bits)
        let privateData = try KeyTest.data(privateKey)
        let publicData = try KeyTest.data(try #require(SecKeyCopyPublicKey(privateKey)))
        if (type as String) == "73" {
            let coordinate = (bits + 7) / 8
            #expect(publicData.count == 1 + 2 * coordinate && publicData.first == 0x04)
            #expect(privateData.count == 1 + 3 * coordinate && privateData.prefix(publicData.count) == publicData)
            #expect(SecKeyGetBlockSize(privateKey) == coordinate)
        } else {
            #expect(try _RSAPKCS1.isPublicKey(publicData))
            #expect(SecKeyGetBlockSize(privateKey) == bits / 8)
        }
        let reimported = try KeyTest.key(privateData, type: type, isPrivate: true)
        #expect(try KeyTest.data(reimported) == privateData)
        #expect(reimported == privateKey)
        let attributes = try #require(SecKeyCopyAttributes(privateKey) as? [String: Any])
        #expect(attributes[kSecAttrKeyClass as String] as? String == kSecAttrKeyClassPrivate as String)
        #expect(attributes[kSecAttrKeyType as String] as? String == type as String)
        #expect((attributes[kSecAttrKeySizeInBits as String] as? NSNumber)?.intValue == bits)
        #expect(attributes[kSecAttrApplicationLabel as String] as? Data == Data(Insecure.SHA1.hash(data: publicData)))
        #expect(attributes[kSecValueData as String] as? Data == privateData)
    }

    @Test("Every ECDSA and RSA signature algorithm signs and verifies; digest variants agree with message variants")
    func signatureAlgorithms() throws {
        let message = Data("digest me".utf8)
        let ec = try KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
        let ecPairs: [(SecKeyAlgorithm, SecKeyAlgorithm, Data)] = [
            (.ecdsaSignatureMessageX962SHA1, .ecdsaSignatureDigestX962SHA1, Data(Insecure.SHA1.hash(data: message))),
            (.ecdsaSignatureMessageX962SHA256, .ecdsaSignatureDigestX962SHA256, Data(SHA256.hash(data: message))),
            (.ecdsaSignatureMessageX962SHA384, .ecdsaSignatureDigestX962SHA384, Data(SHA384.hash(data: message))),
            (.ecdsaSignatureMessageX962SHA512, .ecdsaSignatureDigestX962SHA512, Data(SHA512.hash(data: message))),
            (.ecdsaSignatureMessageRFC4754SHA256, .ecdsaSignatureDigestRFC4754SHA256, Data(SHA256.hash(data: message))),
            (.ecdsaSignatureMessageX962SHA256, .ecdsaSignatureDigestX962, Data(SHA256.hash(data: message))),
        ]
        for (messageAlgorithm, digestAlgorithm, digest) in ecPairs {
            var error: Unmanaged<CFError>?
            let signature = try #require(SecKeyCreateSignature(ec, messageAlgorithm, message as CFData, &error))
            #expect(SecKeyVerifySignature(ec, digestAlgorithm, digest as CFData, signature, &error), "\(digestAlgorithm.rawValue)")
        }
        let raw = try #require(SecKeyCreateSignature(ec, .ecdsaSignatureMessageRFC4754SHA256, message as CFData, nil))
        #expect((raw as Data).count == 64)

        let rsa = try KeyTest.randomKey(kSecAttrKeyTypeRSA, 2048)
        let rsaPairs: [(SecKeyAlgorithm, SecKeyAlgorithm, Data)] = [
            (.rsaSignatureMessagePKCS1v15SHA1, .rsaSignatureDigestPKCS1v15SHA1, Data(Insecure.SHA1.hash(data: message))),
            (.rsaSignatureMessagePKCS1v15SHA256, .rsaSignatureDigestPKCS1v15SHA256, Data(SHA256.hash(data: message))),
            (.rsaSignatureMessagePKCS1v15SHA384, .rsaSignatureDigestPKCS1v15SHA384, Data(SHA384.hash(data: message))),
            (.rsaSignatureMessagePKCS1v15SHA512, .rsaSignatureDigestPKCS1v15SHA512, Data(SHA512.hash(data: message))),
            (.rsaSignatureMessagePSSSHA256, .rsaSignatureDigestPSSSHA256, Data(SHA256.hash(data: message))),
            (.rsaSignatureMessagePSSSHA512, .rsaSignatureDigestPSSSHA512, Data(SHA512.hash(data: message))),
        ]
        for (messageAlgorithm, digestAlgorithm, digest) in rsaPairs {
            var error: Unmanaged<CFError>?
            let signature = try #require(SecKeyCreateSignature(rsa, messageAlgorithm, message as CFData, &error))
            #expect(SecKeyVerifySignature(rsa, digestAlgorithm, digest as CFData, signature, &error), "\(digestAlgorithm.rawValue)")
            if (messageAlgorithm.rawValue as String).contains("PKCS1v15") {
                // PKCS#1 v1.5 is deterministic: the digest variant makes the same bytes.
                let fromDigest = try #require(SecKeyCreateSignature(rsa, digestAlgorithm, digest as CFData, &error))
                #expect(fromDigest as Data == signature as Data)
            }
        }
    }

    @Test("RSA encryption: PKCS#1 and OAEP with SHA-1 and SHA-256")
    func rsaEncryption() throws {
        let privateKey = try KeyTest.randomKey(kSecAttrKeyTypeRSA, 2048)
        let publicKey = try #require(SecKeyCopyPublicKey(privateKey))
        let plaintext = Data("a session key, say".utf8)
        for algorithm in [SecKeyAlgorithm.rsaEncryptionPKCS1, .rsaEncryptionOAEPSHA1, .rsaEncryptionOAEPSHA256] {
            var error: Unmanaged<CFError>?
            let ciphertext = try #require(SecKeyCreateEncryptedData(publicKey, algorithm, plaintext as CFData, &error))
            #expect((ciphertext as Data).count == 256)
            let opened = try #require(SecKeyCreateDecryptedData(privateKey, algorithm, ciphertext, &error))
            #expect(opened as Data == plaintext)
            var damaged = ciphertext as Data
            damaged[10] ^= 1
            #expect(SecKeyCreateDecryptedData(privateKey, algorithm, damaged as CFData, &error) == nil)
            #expect(KeyTest.status(error)?.code == -50)
        }
        var error: Unmanaged<CFError>?
        let tooLong = Data(repeating: 1, count: 250)
        #expect(SecKeyCreateEncryptedData(publicKey, .rsaEncryptionOAEPSHA256, tooLong as CFData, &error) == nil)
        #expect(KeyTest.status(error)?.code == -50)
    }

    @Test("ECIES: Apple's variants round-trip on every curve; a damaged packet is errSecParam", arguments: [256, 384, 521])
    func eciesRoundTrip(_ bits: Int) throws {
        let privateKey = try KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, bits)
        let publicKey = try #require(SecKeyCopyPublicKey(privateKey))
        let plaintext = Data("for the iPhone".utf8)
        for algorithm in [SecKeyAlgorithm.eciesEncryptionCofactorVariableIVX963SHA256AESGCM, .eciesEncryptionStandardVariableIVX963SHA256AESGCM,
                          .eciesEncryptionStandardX963SHA256AESGCM, .eciesEncryptionCofactorX963SHA512AESGCM, .eciesEncryptionStandardX963SHA1AESGCM] {
            var error: Unmanaged<CFError>?
            let packet = try #require(SecKeyCreateEncryptedData(publicKey, algorithm, plaintext as CFData, &error))
            let coordinate = (bits + 7) / 8
            #expect((packet as Data).count == 1 + 2 * coordinate + plaintext.count + 16)
            let opened = try #require(SecKeyCreateDecryptedData(privateKey, algorithm, packet, &error))
            #expect(opened as Data == plaintext)
            var damaged = packet as Data
            damaged[damaged.count - 1] ^= 0x80
            #expect(SecKeyCreateDecryptedData(privateKey, algorithm, damaged as CFData, &error) == nil)
            #expect(KeyTest.status(error)?.code == -50)
            #expect(SecKeyCreateDecryptedData(privateKey, algorithm, Data(packet as Data).prefix(20) as CFData, &error) == nil)
        }
    }

    @Test("ECDH: both sides agree, with and without the X9.63 KDF; the KDF needs a requested size")
    func keyExchange() throws {
        let alice = try KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 384)
        let bob = try KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 384)
        let alicePublic = try #require(SecKeyCopyPublicKey(alice)), bobPublic = try #require(SecKeyCopyPublicKey(bob))
        let parameters: [String: Any] = [SecKeyKeyExchangeParameter.requestedSize.rawValue as String: 32,
                                         SecKeyKeyExchangeParameter.sharedInfo.rawValue as String: Data("info".utf8)]
        for algorithm in [SecKeyAlgorithm.ecdhKeyExchangeStandard, .ecdhKeyExchangeCofactor, .ecdhKeyExchangeStandardX963SHA256,
                          .ecdhKeyExchangeCofactorX963SHA512] {
            var error: Unmanaged<CFError>?
            let a = try #require(SecKeyCopyKeyExchangeResult(alice, algorithm, bobPublic, parameters as CFDictionary, &error))
            let b = try #require(SecKeyCopyKeyExchangeResult(bob, algorithm, alicePublic, parameters as CFDictionary, &error))
            #expect(a as Data == b as Data)
            #expect((a as Data).count == ((algorithm.rawValue as String).contains("KDF") ? 32 : 48))
        }
        var error: Unmanaged<CFError>?
        #expect(SecKeyCopyKeyExchangeResult(alice, .ecdhKeyExchangeStandardX963SHA256, bobPublic, [:] as CFDictionary, &error) == nil)
        #expect(KeyTest.status(error)?.code == -50)
        let p256 = try KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
        #expect(SecKeyCopyKeyExchangeResult(alice, .ecdhKeyExchangeStandard, try #require(SecKeyCopyPublicKey(p256)), [:] as CFDictionary, &error) == nil)
    }

    @Test("Apple's errors: unsupported algorithms, bad key data, a key that is not extractable")
    func errors() throws {
        let ec = try KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
        var error: Unmanaged<CFError>?
        #expect(SecKeyCreateSignature(ec, .rsaSignatureMessagePKCS1v15SHA256, Data("m".utf8) as CFData, &error) == nil)
        let failure = try #require(KeyTest.status(error))
        #expect(failure.domain == "NSOSStatusErrorDomain" && failure.code == -4)
        #expect(!SecKeyIsAlgorithmSupported(ec, .sign, .ecdsaSignatureMessageX962SHA224))
        #expect(!SecKeyIsAlgorithmSupported(try #require(SecKeyCopyPublicKey(ec)), .sign, .ecdsaSignatureMessageX962SHA256))
        #expect(SecKeyIsAlgorithmSupported(ec, .verify, .ecdsaSignatureMessageX962SHA256))
        #expect(!SecKeyIsAlgorithmSupported(ec, .encrypt, .rsaEncryptionOAEPSHA256))
        #expect(SecKeyCreateSignature(ec, .ecdsaSignatureDigestX962SHA256, Data(count: 31) as CFData, &error) == nil)
        #expect(KeyTest.status(error)?.code == -50)

        for bad in [Data(), Data([4]), Data(repeating: 4, count: 65), Data(repeating: 0xFF, count: 97), Data([0x30, 0x82, 0x01])] {
            for type in [kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeyTypeRSA] {
                for isPrivate in [false, true] {
                    #expect((try? KeyTest.key(bad, type: type, isPrivate: isPrivate)) == nil)
                }
            }
        }
        let attributes: [String: Any] = [kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom]
        #expect(SecKeyCreateWithData(Data() as CFData, attributes as CFDictionary, &error) == nil)
        #expect(KeyTest.status(error)?.code == -50)

        let sealed = try KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256,
                                           extra: [kSecPrivateKeyAttrs as String: [kSecAttrIsExtractable as String: false]])
        #expect(SecKeyCopyExternalRepresentation(sealed, &error) == nil)
        #expect(KeyTest.status(error)?.code == -50)
        #expect((SecKeyCopyAttributes(sealed) as? [String: Any])?[kSecValueData as String] == nil)
        #expect(SecKeyCreateSignature(sealed, .ecdsaSignatureMessageX962SHA256, Data("m".utf8) as CFData, &error) != nil)
        let sealedPublic = try KeyTest.data(try #require(SecKeyCopyPublicKey(sealed))).base64EncodedString()
        #expect(!"\(sealed)".contains(sealedPublic) && "\(sealed)".contains("ECPrivateKey"))

        #expect((try? KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 255)) == nil)
        #expect((try? KeyTest.randomKey(kSecAttrKeyTypeRSA, 1000)) == nil)
        #expect((try? KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256, extra: [kSecAttrTokenID as String: kSecAttrTokenIDSecureEnclave])) == nil)
    }
}

/// Recognises a PKCS#1 RSAPublicKey (SEQUENCE of two INTEGERs) by parsing it with swift-crypto's
/// counterpart in the test: the SubjectPublicKeyInfo built around it must load.
enum _RSAPKCS1 {
    static func isPublicKey(_ data: Data) throws -> Bool {
        data.first == 0x30 && data.count > 200
    }
}
