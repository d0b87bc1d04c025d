/// The elliptic curves Keyhaven's keys use (NIST prime curves: Apple's `kSecAttrKeyTypeECSECPrimeRandom`).
package enum Curve: Sendable, Hashable, CaseIterable {
    case p256, p384, p521

    /// The curve for a key size in bits, as `kSecAttrKeySizeInBits` gives it.
    package init?(bits: Int) {
        switch bits {
        case 256: self = .p256
        case 384: self = .p384
        case 521: self = .p521
        default: return nil
        }
    }

    /// The key size in bits.
    package var bits: Int {
        switch self {
        case .p256: return 256
        case .p384: return 384
        case .p521: return 521
        }
    }

    /// Bytes in one coordinate or in the private scalar.
    package var coordinateByteCount: Int { (bits + 7) / 8 }

    /// Bytes of an X9.63 uncompressed public key (`04 || X || Y`).
    package var publicByteCount: Int { 1 + 2 * coordinateByteCount }

    /// Bytes of Apple's private key representation (`04 || X || Y || K`).
    package var privateByteCount: Int { 1 + 3 * coordinateByteCount }

    /// The curve whose public or private representation has `count` bytes.
    package init?(representationByteCount count: Int, isPrivate: Bool) {
        guard let curve = Curve.allCases.first(where: { (isPrivate ? $0.privateByteCount : $0.publicByteCount) == count }) else {
            return nil
        }
        self = curve
    }
}

/// What kind of asymmetric key a key is: its algorithm family and size.
package enum KeyKind: Sendable, Hashable {
    case ec(Curve)
    case rsa(bits: Int)

    /// Apple's `kSecAttrKeyType` value: 73 for elliptic curve keys, 42 for RSA.
    package var appleKeyType: Int {
        switch self {
        case .ec: return 73
        case .rsa: return 42
        }
    }

    /// Whether this is an RSA key.
    package var isRSA: Bool { appleKeyType == 42 }

    /// The key size in bits (`kSecAttrKeySizeInBits`).
    package var bits: Int {
        switch self {
        case .ec(let curve): return curve.bits
        case .rsa(let bits): return bits
        }
    }

    /// Apple's `SecKeyGetBlockSize`: the modulus in bytes for RSA, a coordinate in bytes for EC.
    package var blockSize: Int {
        switch self {
        case .ec(let curve): return curve.coordinateByteCount
        case .rsa(let bits): return (bits + 7) / 8
        }
    }

    /// RSA sizes that can be generated: Apple's range, 1024 to 8192 bits in steps of 8.
    package static func isGeneratableRSASize(_ bits: Int) -> Bool {
        bits >= 1024 && bits <= 8192 && bits % 8 == 0
    }
}
