/// The hash functions Apple's algorithms name.
package enum HashName: String, Sendable, CaseIterable {
    case sha1 = "SHA1", sha224 = "SHA224", sha256 = "SHA256", sha384 = "SHA384", sha512 = "SHA512"

    /// Output bytes.
    package var byteCount: Int {
        switch self {
        case .sha1: return 20
        case .sha224: return 28
        case .sha256: return 32
        case .sha384: return 48
        case .sha512: return 64
        }
    }
}

/// One of Apple's `SecKeyAlgorithm` values, parsed from its string (`algid:sign:ECDSA:...`).
package enum KeyAlgorithm: Sendable, Hashable {
    /// How a signature algorithm takes its input.
    package enum Input: Sendable, Hashable {
        /// The message, hashed with this function first.
        case message(HashName)
        /// A digest made with this function (nil: any digest, Apple's `digest-X962`/`RFC4754`).
        case digest(HashName?)
    }

    /// ECDSA; `raw` is RFC 4754's `r || s`, otherwise X9.62 DER.
    case ecdsa(Input, raw: Bool)
    /// RSA PKCS#1 v1.5 signatures.
    case rsaPKCS1v15Signature(Input)
    /// RSA PSS signatures (salt as long as the digest, MGF1 with the same hash).
    case rsaPSSSignature(Input)
    /// RSA PKCS#1 v1.5 encryption.
    case rsaPKCS1Encryption
    /// RSA OAEP encryption with this hash for the label and MGF1.
    case rsaOAEPEncryption(HashName)
    /// ECDH; with a hash, the shared secret goes through the ANSI X9.63 KDF.
    case ecdh(kdf: HashName?)
    /// Apple's ECIES: ECDH with an ephemeral key, X9.63 KDF, AES-GCM; `variableIV` derives the IV too.
    case ecies(HashName, variableIV: Bool)

    /// Parses Apple's algorithm string; nil for anything Keyhaven does not implement (raw RSA,
    /// MD5, RSA OAEP with AES-GCM, the smart-card ECIES).
    package init?(appleName name: String) {
        let parts = name.split(separator: ":", omittingEmptySubsequences: false).map(String.init)
        guard parts.count >= 3, parts[0] == "algid" else { return nil }
        switch (parts[1], parts[2]) {
        case ("sign", "ECDSA"): guard let value = Self.ecdsa(parts) else { return nil }; self = value
        case ("sign", "RSA"): guard let value = Self.rsaSignature(parts) else { return nil }; self = value
        case ("encrypt", "RSA"): guard let value = Self.rsaEncryption(parts) else { return nil }; self = value
        case ("encrypt", "ECIES"): guard let value = Self.ecies(parts) else { return nil }; self = value
        case ("keyexchange", "ECDH"), ("keyexchange", "ECDHC"):
            if parts.count == 3 { self = .ecdh(kdf: nil); return }
            guard parts.count == 5, parts[3] == "KDFX963", let hash = HashName(rawValue: parts[4]) else { return nil }
            self = .ecdh(kdf: hash)
        default:
            return nil
        }
    }

    private static func ecdsa(_ parts: [String]) -> KeyAlgorithm? {
        if parts.count == 4, parts[3] == "RFC4754" { return .ecdsa(.digest(nil), raw: true) }
        guard parts.count == 4 || parts.count == 5 else { return nil }
        let hash = parts.count == 5 ? HashName(rawValue: parts[4]) : nil
        if parts.count == 5, hash == nil { return nil }
        switch parts[3] {
        case "digest-X962": return .ecdsa(.digest(hash), raw: false)
        case "digest-RFC4754": return .ecdsa(.digest(hash), raw: true)
        case "message-X962": return hash.map { .ecdsa(.message($0), raw: false) }
        case "message-RFC4754": return hash.map { .ecdsa(.message($0), raw: true) }
        default: return nil
        }
    }

    private static func rsaSignature(_ parts: [String]) -> KeyAlgorithm? {
        guard parts.count >= 5, let hash = HashName(rawValue: parts[4]) else { return nil }
        switch parts[3] {
        case "digest-PKCS1v15" where parts.count == 5: return .rsaPKCS1v15Signature(.digest(hash))
        case "message-PKCS1v15" where parts.count == 5: return .rsaPKCS1v15Signature(.message(hash))
        case "digest-PSS", "message-PSS":
            // algid:sign:RSA:digest-PSS:SHA256:SHA256:32: the MGF1 hash and the salt length follow.
            guard parts.count == 7, parts[5] == parts[4], parts[6] == String(hash.byteCount) else { return nil }
            return .rsaPSSSignature(parts[3] == "digest-PSS" ? .digest(hash) : .message(hash))
        default: return nil
        }
    }

    private static func rsaEncryption(_ parts: [String]) -> KeyAlgorithm? {
        if parts.count == 4, parts[3] == "PKCS1" { return .rsaPKCS1Encryption }
        guard parts.count == 5, parts[3] == "OAEP", let hash = HashName(rawValue: parts[4]) else { return nil }
        return .rsaOAEPEncryption(hash)
    }

    private static func ecies(_ parts: [String]) -> KeyAlgorithm? {
        // algid:encrypt:ECIES:ECDH(C):KDFX963:SHA256:AESGCM(-KDFIV)
        guard parts.count == 7, parts[3] == "ECDH" || parts[3] == "ECDHC", parts[4] == "KDFX963",
              let hash = HashName(rawValue: parts[5]) else { return nil }
        switch parts[6] {
        case "AESGCM": return .ecies(hash, variableIV: false)
        case "AESGCM-KDFIV": return .ecies(hash, variableIV: true)
        default: return nil
        }
    }
}
