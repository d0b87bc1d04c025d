/// The external formats of keys and certificates, with the raw values of Apple's
/// `SecExternalFormat` (SecImportExport.h).
package enum ExternalFormat: UInt32, Sendable, CaseIterable {
    case unknown = 0
    /// Keys: SEC1 / PKCS#1 for private keys, SubjectPublicKeyInfo for public keys.
    case openSSL = 1
    case ssh = 2
    /// Keys: PKCS#8 for private keys, PKCS#1 for RSA public keys.
    case bsafe = 3
    case rawKey = 4
    /// Private keys: encrypted PKCS#8.
    case wrappedPKCS8 = 5
    /// Private keys: OpenSSL's traditional encrypted PEM.
    case wrappedOpenSSL = 6
    case wrappedSSH = 7
    case wrappedLSH = 8
    /// One DER certificate.
    case x509Cert = 9
    /// PEM blocks of certificates and keys.
    case pemSequence = 10
    case pkcs7 = 11
    case pkcs12 = 12
    case netscapeCertSequence = 13
    case sshv2 = 14

    /// The formats Keyhaven reads and writes; the others are errSecUnsupportedFormat.
    package var isSupported: Bool {
        switch self {
        case .unknown, .openSSL, .bsafe, .wrappedPKCS8, .wrappedOpenSSL, .x509Cert, .pemSequence, .pkcs12: return true
        case .ssh, .rawKey, .wrappedSSH, .wrappedLSH, .pkcs7, .netscapeCertSequence, .sshv2: return false
        }
    }
}

/// What an external representation holds, with the raw values of Apple's `SecExternalItemType`.
package enum ExternalItemType: UInt32, Sendable, CaseIterable {
    case unknown = 0
    case privateKey = 1
    case publicKey = 2
    case sessionKey = 3
    case certificate = 4
    /// More than one item, or a container (PKCS#12, a PEM sequence).
    case aggregate = 5
}

/// One thing read from, or written to, an external representation.
package enum ExternalItem: Sendable {
    case certificate(CertificateInfo)
    case key(AsymmetricKey)
    /// A private key with its certificate (from a PKCS#12 file). Its chain, the file's other
    /// certificates, also comes as `.certificate` items.
    case identity(PKCS12Identity)

    /// The item type of this one item.
    package var itemType: ExternalItemType {
        switch self {
        case .certificate: return .certificate
        case .key(let key): return key.isPrivate ? .privateKey : .publicKey
        case .identity: return .aggregate
        }
    }
}
