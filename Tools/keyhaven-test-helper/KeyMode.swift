import Foundation
import KeychainServices

/// `keys PREFIX COUNT`: adds P-256 private keys tagged PREFIX-N one after another, printing
/// `K N <public key hex>` after each add returns success (the crash test kills it mid-stream and
/// checks that every acknowledged key is there and signs).
func runKeyMode(prefix: String, count: Int) -> Never {
    for index in 0..<count {
        let parameters: [String: Any] = [
            kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256,
            kSecPrivateKeyAttrs as String: [kSecAttrIsPermanent as String: true,
                                            kSecAttrApplicationTag as String: Data("\(prefix)-\(index)".utf8)],
        ]
        var error: Unmanaged<CFError>?
        guard let key = SecKeyCreateRandomKey(parameters as CFDictionary, &error),
              let publicKey = SecKeyCopyPublicKey(key),
              let bytes = SecKeyCopyExternalRepresentation(publicKey, &error) as Data? else {
            VersionedItems.say("failed \(index) \(error.map { $0.takeRetainedValue().code } ?? 0)")
            exit(1)
        }
        VersionedItems.say("K \(index) \(bytes.map { String(format: "%02x", $0) }.joined())")
    }
    exit(0)
}
