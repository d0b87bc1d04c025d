import FoundationEssentials
import KeychainModel

/// The attributes Apple's client stores for a key or a certificate, read from the object itself
/// (Apple's `SecItemSchema.c`): shared by the library's `SecItemAdd` and the command's `import`.
package enum ItemAttributes {
    /// A key's: key class and type, `klbl` (SHA-1 of the public key), sizes, and the flags of
    /// Apple's `SecKeyCopyAttributes`, as stored numbers.
    package static func key(_ key: AsymmetricKey, isPrivate: Bool, isExtractable: Bool) -> [String: AttributeValue] {
        let extractable = isExtractable || !isPrivate
        let flags: KeyValuePairs<AttributeName, Bool> = [
            .isPermanent: true, .isPrivate: true, .isModifiable: true, .isSensitive: !extractable, .wasAlwaysSensitive: !extractable,
            .isExtractable: extractable, .wasNeverExtractable: !extractable, .canEncrypt: !isPrivate, .canDecrypt: isPrivate,
            .canDerive: true, .canSign: isPrivate, .canVerify: !isPrivate, .canSignRecover: false, .canVerifyRecover: false,
            .canWrap: !isPrivate, .canUnwrap: isPrivate,
        ]
        var attributes: [String: AttributeValue] = [:]
        for (name, flag) in flags { attributes[name] = .number(flag ? 1 : 0) }
        attributes[.keyClass] = .number(isPrivate ? 1 : 0)
        attributes[.applicationLabel] = .data(key.applicationLabel)
        attributes[.type] = .number(Int64(key.kind.appleKeyType))
        attributes[.keySizeInBits] = .number(Int64(key.kind.bits))
        attributes[.effectiveKeySize] = .number(Int64(key.kind.bits))
        return attributes
    }

    /// `kSecAttrCertificateType`: CSSM_CERT_X_509v3; `kSecAttrCertificateEncoding`: CSSM_CERT_ENCODING_DER.
    static let x509v3: Int64 = 3
    static let derEncoding: Int64 = 3

    /// A certificate's: type and encoding, the normalized subject and issuer, serial number,
    /// subject key identifier, the public key's hash, and the subject summary as the label.
    package static func certificate(_ info: CertificateInfo) -> [String: AttributeValue] {
        var attributes: [String: AttributeValue] = .named([
            .certificateType: .number(x509v3), .certificateEncoding: .number(derEncoding),
            .subject: .data(Data(info.normalizedSubjectContent)), .issuer: .data(Data(info.normalizedIssuerContent)),
            .serialNumber: .data(Data(info.serialNumber)), .publicKeyHash: .data(info.publicKeyHash),
        ])
        if let skid = info.subjectKeyIdentifier { attributes[.subjectKeyID] = .data(Data(skid)) }
        if let summary = info.subjectSummary { attributes[.label] = .string(summary) }
        return attributes
    }
}
