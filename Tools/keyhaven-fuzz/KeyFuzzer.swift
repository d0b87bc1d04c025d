import Foundation
import KeychainKeys

/// The `keys` target: bytes as key external representations (EC and RSA, public and private),
/// as algorithm names, and as signatures, ciphertexts and peer keys given to real keys. Every
/// path must return or throw, never crash.
enum KeyFuzzer {
    /// Keys made once (RSA generation is slow): the operations below use them on fuzzed input.
    static let ecKey = try! AsymmetricKey.generate(.ec(.p256))
    static let rsaKey = try! AsymmetricKey.generate(.rsa(bits: 1024))

    static func run(_ bytes: [UInt8]) {
        guard let selector = bytes.first else { return }
        let body = Array(bytes.dropFirst())
        for type in [73, 42] {
            for isPrivate in [false, true] {
                _ = try? AsymmetricKey(externalRepresentation: body, keyType: type, isPrivate: isPrivate)
            }
        }
        let name = String(decoding: body, as: UTF8.self)
        if let algorithm = KeyAlgorithm(appleName: name) {
            for key in [ecKey, rsaKey] {
                _ = try? key.sign(algorithm, Array("m".utf8))
                _ = try? key.encrypt(algorithm, Array("m".utf8))
            }
        }
        let algorithms = ["algid:sign:ECDSA:message-X962:SHA256", "algid:sign:ECDSA:RFC4754", "algid:sign:RSA:message-PSS:SHA256:SHA256:32",
                          "algid:encrypt:ECIES:ECDHC:KDFX963:SHA256:AESGCM-KDFIV", "algid:encrypt:RSA:OAEP:SHA256",
                          "algid:encrypt:RSA:PKCS1", "algid:sign:RSA:digest-PKCS1v15:SHA1"]
        guard let algorithm = KeyAlgorithm(appleName: algorithms[Int(selector) % algorithms.count]) else { return }
        for key in [ecKey, rsaKey] {
            _ = try? key.verify(algorithm, Array("m".utf8), signature: body)
            _ = try? key.decrypt(algorithm, body)
            _ = try? key.sign(algorithm, body)
        }
        if let peer = try? AsymmetricKey(externalRepresentation: body, keyType: 73, isPrivate: false) {
            _ = try? ecKey.exchange(.ecdh(kdf: .sha256), with: peer, requestedSize: Int(selector), sharedInfo: body)
        }
    }
}
