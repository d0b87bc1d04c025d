import Foundation
import KeychainKeys

/// What `SecItemImport` read, as Security objects, and their addition to a keychain.
struct ImportedObjects {
    /// `SecCertificate`, `SecKey` and `SecIdentity` objects, in the order read.
    let objects: [AnyObject]

    init(_ items: [ExternalItem], extractable: Bool) {
        var objects: [AnyObject] = []
        for item in items {
            switch item {
            case .certificate(let info):
                objects.append(SecCertificate(info))
            case .key(let key):
                objects.append(SecKey(key, isExtractable: extractable || !key.isPrivate))
            case .identity(let identity):
                objects.append(SecIdentity(certificate: SecCertificate(identity.certificate),
                                           privateKey: SecKey(identity.privateKey, isExtractable: extractable)))
            }
        }
        self.objects = objects
    }

    var privateKeyCount: Int {
        objects.filter { ($0 as? SecKey)?.isPrivate == true || $0 is SecIdentity }.count
    }

    /// Adds every object to `keychain`: certificates already there are kept; a key already there
    /// is errSecDuplicateItem. On any failure, what this call added is deleted again.
    func add(to keychain: SecKeychain) -> OSStatus {
        var added: [Data] = []
        func undo() { for reference in added { SecItemDelete([kSecValuePersistentRef as String: reference] as CFDictionary) } }
        for object in objects {
            let parts: [(AnyObject, CFString)]
            if let identity = object as? SecIdentity {
                parts = [(identity.certificate, kSecClassCertificate), (identity.privateKey, kSecClassKey)]
            } else if object is SecCertificate {
                parts = [(object, kSecClassCertificate)]
            } else {
                parts = [(object, kSecClassKey)]
            }
            for (part, itemClass) in parts {
                var reference: CFTypeRef?
                let query: [String: Any] = [kSecClass as String: itemClass, kSecValueRef as String: part,
                                            kSecUseKeychain as String: keychain, kSecReturnPersistentRef as String: true]
                let status = SecItemAdd(query as CFDictionary, &reference)
                if status == errSecDuplicateItem, itemClass == kSecClassCertificate { continue }
                guard status == errSecSuccess else {
                    undo()
                    return status
                }
                if let reference = reference as? Data { added.append(reference) }
            }
        }
        return errSecSuccess
    }
}
