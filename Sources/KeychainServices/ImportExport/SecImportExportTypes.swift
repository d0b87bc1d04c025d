import Foundation

/// The external format of keys and certificates for `SecItemImport` and `SecItemExport`
/// (SecImportExport.h's raw values).
public enum SecExternalFormat: UInt32, Sendable {
    /// Import: find out. Export: X.509 for one certificate, OpenSSL for one key, a PEM sequence
    /// for several items.
    case formatUnknown = 0
    /// Keys: SEC1 (`EC PRIVATE KEY`) or PKCS#1 (`RSA PRIVATE KEY`) private keys,
    /// SubjectPublicKeyInfo public keys.
    case formatOpenSSL = 1
    /// OpenSSH 1 keys (not supported: errSecUnsupportedFormat).
    case formatSSH = 2
    /// Keys: PKCS#8 private keys, PKCS#1 RSA public keys.
    case formatBSAFE = 3
    /// Raw symmetric keys (not supported: errSecUnsupportedFormat).
    case formatRawKey = 4
    /// Private keys: encrypted PKCS#8 (PBES2, AES-256-CBC); needs a passphrase.
    case formatWrappedPKCS8 = 5
    /// Private keys: OpenSSL's traditional encrypted PEM (DES-EDE3-CBC); needs a passphrase.
    case formatWrappedOpenSSL = 6
    /// Not supported: errSecUnsupportedFormat.
    case formatWrappedSSH = 7
    /// Not supported: errSecUnsupportedFormat.
    case formatWrappedLSH = 8
    /// One certificate, DER.
    case formatX509Cert = 9
    /// Certificates and keys as PEM blocks.
    case formatPEMSequence = 10
    /// Not supported: errSecUnsupportedFormat.
    case formatPKCS7 = 11
    /// Certificates and private keys in a PKCS#12 file; needs a passphrase.
    case formatPKCS12 = 12
    /// Not supported: errSecUnsupportedFormat.
    case formatNetscapeCertSequence = 13
    /// OpenSSH 2 public keys (not supported: errSecUnsupportedFormat).
    case formatSSHv2 = 14
}

/// What an external representation holds (SecImportExport.h's raw values).
public enum SecExternalItemType: UInt32, Sendable {
    case itemTypeUnknown = 0
    case itemTypePrivateKey = 1
    case itemTypePublicKey = 2
    case itemTypeSessionKey = 3
    case itemTypeCertificate = 4
    /// Several items, or a container: PKCS#12, a PEM sequence.
    case itemTypeAggregate = 5
}

/// Flags of `SecItemImport` and `SecItemExport`.
public struct SecItemImportExportFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Export PEM text instead of DER.
    public static let pemArmour = SecItemImportExportFlags(rawValue: 1)
}

/// Flags of `SecItemImportExportKeyParameters`.
public struct SecKeyImportExportFlags: OptionSet, Sendable {
    public let rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Import fails with errSecMultiplePrivKeys when the data holds more than one private key.
    public static let importOnlyOne = SecKeyImportExportFlags(rawValue: 1)
    /// Ask the user for the passphrase. Keyhaven has no passphrase panel: give `passphrase`
    /// (without it, errSecPassphraseRequired).
    public static let securePassphrase = SecKeyImportExportFlags(rawValue: 2)
    /// Imported keys get no access object (Keyhaven attaches none either way).
    public static let noAccessControl = SecKeyImportExportFlags(rawValue: 4)
}

/// The version `SecItemImportExportKeyParameters.version` must hold.
public var SEC_KEY_IMPORT_EXPORT_PARAMS_VERSION: Int32 { 0 }

/// The key parameters of `SecItemImport` and `SecItemExport`: the passphrase (a `CFString`,
/// or a `CFData` of its bytes), and for imports the keys' attributes.
///
/// `alertTitle`, `alertPrompt`, `accessRef` and `keyUsage` are accepted and not used.
/// `keyAttributes`, when given, is an array of `kSecAttrIsExtractable`, `kSecAttrIsSensitive`
/// and `kSecAttrIsPermanent`: an imported private key is extractable only when the array holds
/// `kSecAttrIsExtractable` (without the array, it is).
public struct SecItemImportExportKeyParameters: @unchecked Sendable {
    public var version: UInt32
    public var flags: SecKeyImportExportFlags
    public var passphrase: Unmanaged<CFTypeRef>?
    public var alertTitle: Unmanaged<CFString>?
    public var alertPrompt: Unmanaged<CFString>?
    public var accessRef: Unmanaged<SecAccess>?
    public var keyUsage: Unmanaged<CFArray>?
    public var keyAttributes: Unmanaged<CFArray>?

    public init() {
        self.init(version: 0, flags: [], passphrase: nil, alertTitle: nil, alertPrompt: nil, accessRef: nil, keyUsage: nil,
                  keyAttributes: nil)
    }

    public init(version: UInt32, flags: SecKeyImportExportFlags, passphrase: Unmanaged<CFTypeRef>?, alertTitle: Unmanaged<CFString>?,
                alertPrompt: Unmanaged<CFString>?, accessRef: Unmanaged<SecAccess>?, keyUsage: Unmanaged<CFArray>?,
                keyAttributes: Unmanaged<CFArray>?) {
        self.version = version
        self.flags = flags
        self.passphrase = passphrase
        self.alertTitle = alertTitle
        self.alertPrompt = alertPrompt
        self.accessRef = accessRef
        self.keyUsage = keyUsage
        self.keyAttributes = keyAttributes
    }
}

extension SecItemImportExportKeyParameters {
    /// The passphrase's bytes: a string's UTF-8, or a data's bytes; nil when none was given.
    var passphraseBytes: [UInt8]? {
        guard let value = passphrase?.takeUnretainedValue() else { return nil }
        if let string = value as? String { return Array(string.utf8) }
        if let data = value as? Data { return Array(data) }
        return nil
    }

    /// Whether imported private keys may be exported again.
    var importsExtractable: Bool {
        guard let attributes = keyAttributes?.takeUnretainedValue() as? [Any] else { return true }
        return attributes.contains { ($0 as? String) == (kSecAttrIsExtractable as String) }
    }
}
