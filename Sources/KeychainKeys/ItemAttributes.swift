import FoundationEssentials
import KeychainModel

/// The attributes Apple's client stores for a key or a certificate, read from the object itself
/// (Apple's `SecItemSchema.c`): shared by the library's `SecItemAdd` and the command's `import`.
package enum ItemAttributes {
    /// A key's: key class and type, `klbl` (SHA-1 of the public key), sizes, and the flags of
    /// Apple's `SecKeyCopyAttributes`, as stored numbers.
    package static func key(_ key: AsymmetricKey, isPrivate: Bool, isExtractable: Bool) -> [String: AttributeValue] {
        let extractable = isExtractable || !isPrivate
        let flags: [String: Bool] = [
            "perm": true, "priv": true, "modi": true, "sens": !extractable, "asen": !extractable,
            "extr": extractable, "next": !extractable, "encr": !isPrivate, "decr": isPrivate, "drve": true,
            "sign": isPrivate, "vrfy": !isPrivate, "snrc": false, "vyrc": false, "wrap": !isPrivate, "unwp": isPrivate,
        ]
        var attributes = flags.mapValues { AttributeValue.number($0 ? 1 : 0) }
        attributes["kcls"] = .number(isPrivate ? 1 : 0)
        attributes["klbl"] = .data(key.applicationLabel)
        attributes["type"] = .number(Int64(key.kind.appleKeyType))
        attributes["bsiz"] = .number(Int64(key.kind.bits))
        attributes["esiz"] = .number(Int64(key.kind.bits))
        return attributes
    }

    /// `kSecAttrCertificateType`: CSSM_CERT_X_509v3; `kSecAttrCertificateEncoding`: CSSM_CERT_ENCODING_DER.
    static let x509v3: Int64 = 3
    static let derEncoding: Int64 = 3

    /// A certificate's: type and encoding, the normalized subject and issuer, serial number,
    /// subject key identifier, the public key's hash, and the subject summary as the label.
    package static func certificate(_ info: CertificateInfo) -> [String: AttributeValue] {
        var attributes: [String: AttributeValue] = [
            "ctyp": .number(x509v3), "cenc": .number(derEncoding),
            "subj": .data(Data(info.normalizedSubjectContent)), "issr": .data(Data(info.normalizedIssuerContent)),
            "slnr": .data(Data(info.serialNumber)), "pkhh": .data(info.publicKeyHash),
        ]
        if let skid = info.subjectKeyIdentifier { attributes["skid"] = .data(Data(skid)) }
        if let summary = info.subjectSummary { attributes["labl"] = .string(summary) }
        return attributes
    }
}
