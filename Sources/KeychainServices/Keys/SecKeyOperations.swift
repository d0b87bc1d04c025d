import Foundation
import KeychainKeys
import KeychainModel

/// Signs `dataToSign` (a message or a digest, as `algorithm` says) with a private key.
///
/// ECDSA X9.62 signatures are DER; RFC 4754 ones are `r || s`. RSA PKCS#1 v1.5 and PSS (salt as
/// long as the digest). errSecUnimplemented in the error when the key cannot perform `algorithm`.
@discardableResult
public func SecKeyCreateSignature(_ key: SecKey, _ algorithm: SecKeyAlgorithm, _ dataToSign: CFData,
                                  _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData? {
    keyCall(error) { () throws(KeyError) -> CFData in
        let parsed = try checked(key, .sign, algorithm)
        let signature = try KeyOperations.sign(key, algorithm, parsed, bytes(of: dataToSign))
        return NSData(bytes: signature, length: signature.count)
    }
}

/// Whether `signature` is a valid signature of `signedData` by `key` (or by its public half).
/// A signature that does not verify gives false and errSecVerifyFailed in the error.
@discardableResult
public func SecKeyVerifySignature(_ key: SecKey, _ algorithm: SecKeyAlgorithm, _ signedData: CFData, _ signature: CFData,
                                  _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> Bool {
    keyCall(error) { () throws(KeyError) -> Bool in
        let parsed = try checked(key, .verify, algorithm)
        try key.publicKey.verify(parsed, bytes(of: signedData), signature: bytes(of: signature))
        return true
    } ?? false
}

/// Encrypts `plaintext` to `key` (RSA PKCS#1 or OAEP; Apple's ECIES for EC keys).
@discardableResult
public func SecKeyCreateEncryptedData(_ key: SecKey, _ algorithm: SecKeyAlgorithm, _ plaintext: CFData,
                                      _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData? {
    keyCall(error) { () throws(KeyError) -> CFData in
        let parsed = try checked(key, .encrypt, algorithm)
        let ciphertext = try key.publicKey.encrypt(parsed, bytes(of: plaintext))
        return NSData(bytes: ciphertext, length: ciphertext.count)
    }
}

/// Decrypts `ciphertext` with a private key. A ciphertext that does not open is errSecParam.
@discardableResult
public func SecKeyCreateDecryptedData(_ key: SecKey, _ algorithm: SecKeyAlgorithm, _ ciphertext: CFData,
                                      _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData? {
    keyCall(error) { () throws(KeyError) -> CFData in
        let parsed = try checked(key, .decrypt, algorithm)
        var plaintext = try KeyOperations.decrypt(key, algorithm, parsed, bytes(of: ciphertext))
        defer { zeroize(&plaintext) }
        return NSData(bytes: plaintext, length: plaintext.count)
    }
}

/// ECDH between `privateKey` and `publicKey`. With an X9.63 algorithm, `parameters` must give
/// `SecKeyKeyExchangeParameter.requestedSize` and may give `.sharedInfo`.
@discardableResult
public func SecKeyCopyKeyExchangeResult(_ privateKey: SecKey, _ algorithm: SecKeyAlgorithm, _ publicKey: SecKey,
                                        _ parameters: CFDictionary,
                                        _ error: UnsafeMutablePointer<Unmanaged<CFError>?>?) -> CFData? {
    keyCall(error) { () throws(KeyError) -> CFData in
        let parsed = try checked(privateKey, .keyExchange, algorithm)
        let params = try KeyParameters(parameters)
        let size = params.entries["requestedSize"].flatMap(KeyParameters.integer)
        let info = (params.entries["sharedInfo"] as? Data).map { [UInt8]($0) } ?? []
        var result = try KeyOperations.exchange(privateKey, algorithm, parsed, with: publicKey.publicKey, requestedSize: size, sharedInfo: info)
        defer { zeroize(&result) }
        return NSData(bytes: result, length: result.count)
    }
}

/// The parsed algorithm, if `key` supports it for `operation` (errSecUnimplemented otherwise).
private func checked(_ key: SecKey, _ operation: SecKeyOperationType, _ algorithm: SecKeyAlgorithm) throws(KeyError) -> KeyAlgorithm {
    let parsed = try parsedAlgorithm(algorithm)
    guard KeySupport.supports(key.kind, isPrivate: key.isPrivate, operation, parsed) else {
        throw KeyError(.unsupportedAlgorithm, "algorithm \(algorithm.rawValue) is not supported by the key")
    }
    return parsed
}
