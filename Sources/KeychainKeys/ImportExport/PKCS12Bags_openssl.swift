// Implementation-only: a target that sees Keyhaven's modules without depending on them has no map
// of its C modules (docs/architecture.md); no type here stores a C type.
@_implementationOnly import COpenSSL
import FoundationEssentials
import KeychainModel

/// The certificates and keys of a PKCS#12 file's safe bags, with their friendlyName and
/// localKeyID attributes.
struct BagContents {
    struct Attributes {
        var name: String?
        var keyID: Data?
    }

    /// The passphrase that opens shrouded keys (nil: written as no passphrase).
    let password: String?
    private var keys: [(AsymmetricKey, Attributes)] = []
    private var certificates: [(CertificateInfo, Attributes)] = []

    init(password: String?) { self.password = password }

    /// Reads every bag of a `STACK_OF(PKCS12_SAFEBAG)`, and of the safe-contents bags inside.
    mutating func collect(_ stack: OpaquePointer, depth: Int) throws(PKCS12Failure) {
        for index in 0..<keyhaven_sk_PKCS12_SAFEBAG_num(stack) {
            guard let bag = keyhaven_sk_PKCS12_SAFEBAG_value(stack, index) else { continue }
            switch PKCS12_SAFEBAG_get_nid(bag) {
            case NID_keyBag:
                guard let info = PKCS12_SAFEBAG_get0_p8inf(bag) else { throw .malformed("a key bag is empty") }
                keys.append((try Self.key(info), Self.attributes(of: bag)))
            case NID_pkcs8ShroudedKeyBag:
                guard let info = PKCS12_decrypt_skey(bag, password, password.map { Int32($0.utf8.count) } ?? 0) else {
                    throw .malformed("a private key of the PKCS#12 file could not be decrypted")
                }
                defer { PKCS8_PRIV_KEY_INFO_free(info) }
                keys.append((try Self.key(info), Self.attributes(of: bag)))
            case NID_certBag where PKCS12_SAFEBAG_get_bag_nid(bag) == NID_x509Certificate:
                guard let x509 = PKCS12_SAFEBAG_get1_cert(bag) else { throw .malformed("a certificate bag is damaged") }
                defer { X509_free(x509) }
                guard let der = try? OpenSSLKey.encoded(x509, i2d_X509), let certificate = CertificateInfo(der: der) else { throw .malformed("a certificate does not parse") }
                certificates.append((certificate, Self.attributes(of: bag)))
            case NID_safeContentsBag where depth < 4:
                if let inner = PKCS12_SAFEBAG_get0_safes(bag) { try collect(inner, depth: depth + 1) }
            default:
                continue   // CRLs, secrets, unknown bags: nothing Keyhaven keeps
            }
        }
    }

    /// Each key with the certificate of its public key, in the file's order of keys.
    func paired() -> PKCS12Contents {
        var contents = PKCS12Contents()
        var used = Set<Int>()
        for (key, keyAttributes) in keys {
            guard let index = certificates.indices.first(where: { !used.contains($0) && certificates[$0].0.publicKey?.publicBytes == key.publicBytes })
            else {
                contents.keys.append(key)
                continue
            }
            used.insert(index)
            let (certificate, certificateAttributes) = certificates[index]
            contents.identities.append(PKCS12Identity(privateKey: key, certificate: certificate, label: keyAttributes.name ?? certificateAttributes.name,
                                                      keyID: keyAttributes.keyID ?? certificateAttributes.keyID))
        }
        contents.certificates = certificates.indices.filter { !used.contains($0) }.map { certificates[$0].0 }
        contents.identities = contents.identities.map {
            PKCS12Identity(privateKey: $0.privateKey, certificate: $0.certificate, chain: contents.certificates, label: $0.label, keyID: $0.keyID)
        }
        return contents
    }

    private static func key(_ info: OpaquePointer) throws(PKCS12Failure) -> AsymmetricKey {
        do {
            var der = try OpenSSLKey.encoded(info, i2d_PKCS8_PRIV_KEY_INFO)
            defer { zeroize(&der) }
            return try OpenSSLKey.privateKey(der: der)
        } catch {
            throw .malformed("a private key of the PKCS#12 file is not an EC (P-256, P-384, P-521) or RSA key")
        }
    }

    private static func attributes(of bag: OpaquePointer) -> Attributes {
        var attributes = Attributes()
        if let name = PKCS12_get_friendlyname(bag) {
            attributes.name = String(cString: name)
            CRYPTO_free(name, #fileID, #line)
        }
        if let value = PKCS12_SAFEBAG_get0_attr(bag, NID_localKeyID) {
            var buffer = [UInt8](repeating: 0, count: 128)
            let length = ASN1_TYPE_get_octetstring(value, &buffer, Int32(buffer.count))
            if length > 0, length <= buffer.count { attributes.keyID = Data(buffer.prefix(Int(length))) }
        }
        return attributes
    }
}
