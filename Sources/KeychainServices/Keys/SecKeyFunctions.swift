import Foundation
import KeychainKeys
import KeychainModel

/// Generates a new private key; its public key is `SecKeyCopyPublicKey`'s.
///
/// `kSecAttrKeyType` is `kSecAttrKeyTypeECSECPrimeRandom` (P-256, P-384, P-521 by
/// `kSecAttrKeySizeInBits`; 256 when absent) or `kSecAttrKeyTypeRSA` (1024 to 8192 bits; 2048
/// when absent). With `kSecAttrIsPermanent` true (in `kSecPrivateKeyAttrs` or at the top level)
/// the private key is added to the keychain with the other attributes given, as Apple does; with
/// it in `kSecPublicKeyAttrs`, the public key too.
/// With `kSecAttrTokenID: kSecAttrTokenIDSecureEnclave` the key is a P-256 key made inside the
/// TPM through the agent (docs/tpm.md): its private key never leaves the TPM. Without a TPM the
/// call fails with errSecUnimplemented, as on a Mac without a Secure Enclave; without the agent,
/// errSecNotAvailable.
@discardableResult
public func SecKeyCreateRandomKey(_ parameters: CFDictionary, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecKey? {
    keyCall(error) { () throws(KeyError) -> SecKey in
        let params = try KeyParameters(parameters)
        if params.entries[.tokenID] != nil { return try EnclaveKeys.create(params) }
        let kind: KeyKind
        switch try params.keyType() {
        case 73:
            guard let curve = Curve(bits: try params.keySize() ?? 256) else {
                throw .param("EC keys are 256, 384 or 521 bits")
            }
            kind = .ec(curve)
        case 42:
            kind = .rsa(bits: try params.keySize() ?? 2048)
        default:
            throw .param("kSecAttrKeyType is not a key type Keyhaven generates")
        }
        let privateAttributes = params.attributes(forPrivateKey: true)
        let publicAttributes = params.attributes(forPrivateKey: false)
        let extractable = KeyParameters.boolean(privateAttributes[.isExtractable]) ?? true
        let key = SecKey(try AsymmetricKey.generate(kind), isExtractable: extractable)
        // As Apple's SecKeyGeneratePair: the public key first, if it is to be kept, then the private.
        if KeyParameters.boolean(publicAttributes[.isPermanent]) == true {
            _ = try KeyStorage.addGenerated(SecKey(key.publicKey), attributes: publicAttributes)
        }
        if KeyParameters.boolean(privateAttributes[.isPermanent]) == true {
            return try KeyStorage.addGenerated(key, attributes: privateAttributes)
        }
        return key
    }
}

/// The public key of a private key (a public key returns itself).
@discardableResult
public func SecKeyCopyPublicKey(_ key: SecKey) -> SecKey? {
    key.isPrivate ? SecKey(key.publicKey) : key
}

/// The key's external representation: X9.63 (`04 || X || Y`, private keys `|| K`) for EC keys,
/// PKCS#1 DER for RSA. A key made with `kSecAttrIsExtractable` false refuses (errSecParam).
@discardableResult
public func SecKeyCopyExternalRepresentation(_ key: SecKey, _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData? {
    keyCall(error) { () throws(KeyError) -> CFData in
        var bytes = try KeyOperations.externalRepresentation(key)
        defer { zeroize(&bytes) }
        return NSData(bytes: bytes, length: bytes.count)
    }
}

/// A key from its external representation. `attributes` gives `kSecAttrKeyType` and
/// `kSecAttrKeyClass`; a `kSecAttrKeySizeInBits` that disagrees with the data is errSecParam.
@discardableResult
public func SecKeyCreateWithData(_ keyData: CFData, _ attributes: CFDictionary,
                                 _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> SecKey? {
    keyCall(error) { () throws(KeyError) -> SecKey in
        let params = try KeyParameters(attributes)
        let isPrivate = try params.keyClass() == 1
        let key = try AsymmetricKey(externalRepresentation: bytes(of: keyData), keyType: try params.keyType(), isPrivate: isPrivate)
        if let size = try params.keySize(), size != 0, size != key.kind.bits {
            throw .param("kSecAttrKeySizeInBits \(size) does not match the key data (\(key.kind.bits) bits)")
        }
        let extractable = KeyParameters.boolean(params.entries[.isExtractable]) ?? true
        return SecKey(key, isExtractable: extractable)
    }
}

/// The key's block size in bytes: the modulus for RSA, a coordinate for EC (32 for P-256).
@discardableResult
public func SecKeyGetBlockSize(_ key: SecKey) -> Int { key.kind.blockSize }

/// Whether `key` can perform `algorithm` for `operation`.
@discardableResult
public func SecKeyIsAlgorithmSupported(_ key: SecKey, _ operation: SecKeyOperationType, _ algorithm: SecKeyAlgorithm) -> Bool {
    guard let parsed = KeyAlgorithm(appleName: algorithm.rawValue as String) else { return false }
    return KeySupport.supports(key.kind, isPrivate: key.isPrivate, operation, parsed)
}
