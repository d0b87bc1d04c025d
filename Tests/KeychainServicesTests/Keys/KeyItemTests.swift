import Crypto
import Foundation
import KeychainServices
import KeychainTestSupport
import Testing

/// Keys in the keychain (`kSecClassKey`): stored by `SecKeyCreateRandomKey` with
/// `kSecAttrIsPermanent` or by `SecItemAdd` with `kSecValueRef`, found as `SecKey`s. Runs
/// embedded and through the agent (CI's KEYHAVEN_TEST_BACKEND=agent pass).
@Suite(.freshKeychain())
struct KeyItemTests {
    static let tag = Data("com.example.keys.signing".utf8)

    func find(_ query: [String: Any]) -> (OSStatus, AnyObject?) {
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        return (status, result)
    }

    @Test("Apple's example: a permanent key found again by its tag signs; its public key verifies")
    func permanentKeyFoundByTag() throws {
        let attributes: [String: Any] = [
            kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256,
            kSecPrivateKeyAttrs as String: [kSecAttrIsPermanent as String: true, kSecAttrApplicationTag as String: Self.tag,
                                            kSecAttrLabel as String: "signing key"],
        ]
        var error: Unmanaged<CFError>?
        let generated = try #require(SecKeyCreateRandomKey(attributes as CFDictionary, &error))
        let (status, found) = find([kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Self.tag,
                                    kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecReturnRef as String: true])
        #expect(status == errSecSuccess)
        let key = try #require(found as? SecKey)
        #expect(key == generated)
        let message = Data("sign with the stored key".utf8)
        let signature = try #require(SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message as CFData, &error))
        #expect(SecKeyVerifySignature(try #require(SecKeyCopyPublicKey(generated)), .ecdsaSignatureMessageX962SHA256,
                                      message as CFData, signature, &error))
        let keyAttributes = try #require(SecKeyCopyAttributes(key) as? [String: Any])
        #expect(keyAttributes[kSecAttrLabel as String] as? String == "signing key")
        #expect(keyAttributes[kSecAttrApplicationTag as String] as? Data == Self.tag)
    }

    @Test("A key added by reference has Apple's attributes: klbl is SHA-1 of the public key, numbers for type and class")
    func attributesOfStoredKey() throws {
        let key = try KeyTest.randomKey(kSecAttrKeyTypeRSA, 2048)
        let publicKey = try #require(SecKeyCopyPublicKey(key))
        #expect(SecItemAdd([kSecValueRef as String: publicKey, kSecAttrApplicationTag as String: Self.tag] as CFDictionary, nil) == errSecSuccess)
        #expect(SecItemAdd([kSecValueRef as String: publicKey, kSecAttrApplicationTag as String: Self.tag] as CFDictionary, nil) == errSecDuplicateItem)
        #expect(SecItemAdd([kSecClass as String: kSecClassKey, kSecValueRef as String: key, kSecAttrApplicationTag as String: Self.tag] as CFDictionary,
                           nil) == errSecSuccess)
        let (status, found) = find([kSecClass as String: kSecClassKey, kSecAttrKeyClass as String: kSecAttrKeyClassPublic,
                                    kSecReturnAttributes as String: true, kSecReturnData as String: true])
        #expect(status == errSecSuccess)
        let attributes = try #require(found as? [String: Any])
        let publicData = try KeyTest.data(publicKey)
        #expect(attributes[kSecAttrApplicationLabel as String] as? Data == Data(Insecure.SHA1.hash(data: publicData)))
        #expect((attributes[kSecAttrKeyType as String] as? NSNumber)?.intValue == 42)
        #expect((attributes[kSecAttrKeyClass as String] as? NSNumber)?.intValue == 0)
        #expect((attributes[kSecAttrKeySizeInBits as String] as? NSNumber)?.intValue == 2048)
        #expect((attributes[kSecAttrCanVerify as String] as? NSNumber)?.boolValue == true)
        #expect(attributes[kSecValueData as String] as? Data == publicData)
        let (all, list) = find([kSecClass as String: kSecClassKey, kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnRef as String: true])
        #expect(all == errSecSuccess)
        #expect(Set((list as? [SecKey]) ?? []) == [key, publicKey])
    }

    @Test("kSecAttrIsExtractable false: the stored key signs, its data is never returned")
    func nonExtractableStoredKey() throws {
        let attributes: [String: Any] = [
            kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
            kSecPrivateKeyAttrs as String: [kSecAttrIsPermanent as String: true, kSecAttrIsExtractable as String: false,
                                            kSecAttrApplicationTag as String: Self.tag],
        ]
        var error: Unmanaged<CFError>?
        let generated = try #require(SecKeyCreateRandomKey(attributes as CFDictionary, &error))
        #expect(SecKeyCopyExternalRepresentation(generated, &error) == nil)
        let (status, data) = find([kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Self.tag, kSecReturnData as String: true])
        #expect(status == errSecSuccess && data == nil)
        let (_, both) = find([kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Self.tag,
                              kSecReturnData as String: true, kSecReturnRef as String: true, kSecReturnAttributes as String: true])
        let dictionary = try #require(both as? [String: Any])
        #expect(dictionary[kSecValueData as String] == nil)
        #expect((dictionary[kSecAttrIsExtractable as String] as? NSNumber)?.boolValue == false)
        let key = try #require(dictionary[kSecValueRef as String] as? SecKey)
        #expect(SecKeyCopyExternalRepresentation(key, &error) == nil)
        #expect(SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, Data("m".utf8) as CFData, &error) != nil)
        // Its extractability cannot be changed afterwards, by any client.
        let query = [kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Self.tag] as CFDictionary
        for name in [kSecAttrIsExtractable, kSecAttrIsSensitive] {
            #expect(SecItemUpdate(query, [name as String: name == kSecAttrIsExtractable] as CFDictionary) == errSecParam)
        }
        #expect(SecItemUpdate(query, [kSecAttrLabel as String: "relabelled"] as CFDictionary) == errSecSuccess)
        let (_, again) = find([kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Self.tag, kSecReturnData as String: true])
        #expect(again == nil)
    }

    @Test("Keys are found, by persistent reference too, and deleted by reference")
    func persistentReferenceAndDelete() throws {
        let key = try KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 384)
        var added: CFTypeRef?
        #expect(SecItemAdd([kSecValueRef as String: key, kSecReturnPersistentRef as String: true] as CFDictionary, &added) == errSecSuccess)
        let reference = try #require(added as? Data)
        let (status, found) = find([kSecValuePersistentRef as String: reference, kSecReturnRef as String: true])
        #expect(status == errSecSuccess && (found as? SecKey) == key)
        #expect(SecItemDelete([kSecValueRef as String: key] as CFDictionary) == errSecSuccess)
        #expect(find([kSecClass as String: kSecClassKey, kSecReturnRef as String: true]).0 == errSecItemNotFound)
        #expect(SecItemDelete([kSecValueRef as String: key] as CFDictionary) == errSecItemNotFound)
    }

    @Test("The keychain file holds no private key material in the clear")
    func privateMaterialEncryptedAtRest() throws {
        let key = try KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
        #expect(SecItemAdd([kSecValueRef as String: key] as CFDictionary, nil) == errSecSuccess)
        let scalar = try KeyTest.data(key).suffix(32)
        let path = TestHome.current!.keychainPath
        var checked = 0
        for file in [path, path + "-wal"] where FileManager.default.fileExists(atPath: file) {
            let bytes = try Data(contentsOf: URL(fileURLWithPath: file))
            #expect(bytes.range(of: scalar) == nil, "\(file)")
            checked += 1
        }
        #expect(checked > 0)
    }
}

extension KeyItemTests {
    /// Through the agent, a stored private key's operations run inside the agent: with its
    /// keychain locked they fail as the item would (errSecInteractionNotAllowed), and work again
    /// after unlock. Embedded, the `SecKey` holds its material, as a software key does on Apple
    /// platforms, and keeps working.
    @Test("Through the agent, a stored private key is used inside the agent; locked, it cannot sign")
    func storedKeyUsedInsideAgent() throws {
        let keychain = try createKeychain("keys.keychain-db", password: "pw")
        let key = try KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
        #expect(SecItemAdd([kSecValueRef as String: key, kSecUseKeychain as String: keychain,
                            kSecAttrApplicationTag as String: Self.tag] as CFDictionary, nil) == errSecSuccess)
        var result: CFTypeRef?
        #expect(SecItemCopyMatching([kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Self.tag,
                                     kSecMatchSearchList as String: [keychain], kSecReturnRef as String: true] as CFDictionary,
                                    &result) == errSecSuccess)
        let found = try #require(result as? SecKey)
        #expect(found == key)
        let message = Data("locked or not".utf8) as CFData
        var error: Unmanaged<CFError>?
        #expect(SecKeyCreateSignature(found, .ecdsaSignatureMessageX962SHA256, message, &error) != nil)
        #expect(SecKeychainLock(keychain) == errSecSuccess)
        let signature = SecKeyCreateSignature(found, .ecdsaSignatureMessageX962SHA256, message, &error)
        if TestAgent.isRequested {
            #expect(signature == nil)
            #expect(KeyTest.status(error)?.code == Int(errSecInteractionNotAllowed))
            #expect(unlock(keychain, "pw") == errSecSuccess)
            #expect(SecKeyCreateSignature(found, .ecdsaSignatureMessageX962SHA256, message, &error) != nil)
            let exported = try #require(SecKeyCopyExternalRepresentation(found, &error))
            #expect(exported as Data == (try KeyTest.data(key)))
        } else {
            #expect(signature != nil)
        }
        let publicKey = try #require(SecKeyCopyPublicKey(found))
        let fresh = try #require(SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message, &error))
        #expect(SecKeyVerifySignature(publicKey, .ecdsaSignatureMessageX962SHA256, message, fresh, &error))
    }

    @Test("Decryption and key exchange with a stored key work the same embedded and through the agent")
    func storedKeyDecryptsAndExchanges() throws {
        let key = try KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256,
                                        extra: [kSecPrivateKeyAttrs as String: [kSecAttrIsPermanent as String: true,
                                                                                kSecAttrApplicationTag as String: Self.tag,
                                                                                kSecAttrIsExtractable as String: false]])
        var result: CFTypeRef?
        #expect(SecItemCopyMatching([kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Self.tag,
                                     kSecReturnRef as String: true] as CFDictionary, &result) == errSecSuccess)
        let stored = try #require(result as? SecKey)
        let publicKey = try #require(SecKeyCopyPublicKey(stored))
        var error: Unmanaged<CFError>?
        let packet = try #require(SecKeyCreateEncryptedData(publicKey, .eciesEncryptionCofactorVariableIVX963SHA256AESGCM,
                                                            Data("to the stored key".utf8) as CFData, &error))
        let opened = try #require(SecKeyCreateDecryptedData(stored, .eciesEncryptionCofactorVariableIVX963SHA256AESGCM, packet, &error))
        #expect(opened as Data == Data("to the stored key".utf8))
        let peer = try KeyTest.randomKey(kSecAttrKeyTypeECSECPrimeRandom, 256)
        let parameters = [SecKeyKeyExchangeParameter.requestedSize.rawValue as String: 16] as CFDictionary
        let peerPublic = try #require(SecKeyCopyPublicKey(peer))
        let ours = try #require(SecKeyCopyKeyExchangeResult(stored, .ecdhKeyExchangeStandardX963SHA256, peerPublic, parameters, &error))
        let theirs = try #require(SecKeyCopyKeyExchangeResult(peer, .ecdhKeyExchangeStandardX963SHA256, publicKey, parameters, &error))
        #expect(ours as Data == theirs as Data)
        #expect(SecKeyCopyExternalRepresentation(stored, &error) == nil)
        #expect(SecKeyCopyExternalRepresentation(key, &error) == nil)
    }

    @Test("kSecAttrIsPermanent in kSecPublicKeyAttrs keeps the public key too; at the top level, both")
    func permanentPublicKey() throws {
        let parameters: [String: Any] = [
            kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
            kSecPrivateKeyAttrs as String: [kSecAttrIsPermanent as String: true, kSecAttrApplicationTag as String: Data("priv".utf8)],
            kSecPublicKeyAttrs as String: [kSecAttrIsPermanent as String: true, kSecAttrApplicationTag as String: Data("pub".utf8)],
        ]
        let key = try #require(SecKeyCreateRandomKey(parameters as CFDictionary, nil))
        let (status, found) = find([kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Data("pub".utf8),
                                    kSecReturnRef as String: true])
        #expect(status == errSecSuccess && (found as? SecKey) == SecKeyCopyPublicKey(key))
        #expect(find([kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Data("priv".utf8)]).0 == errSecSuccess)
        let both: [String: Any] = [kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrIsPermanent as String: true,
                                   kSecAttrLabel as String: "both halves"]
        #expect(SecKeyCreateRandomKey(both as CFDictionary, nil) != nil)
        let (_, all) = find([kSecClass as String: kSecClassKey, kSecAttrLabel as String: "both halves",
                             kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true])
        #expect((all as? [[String: Any]])?.count == 2)
    }
}
