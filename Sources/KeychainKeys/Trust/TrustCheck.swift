/// A check of a trust evaluation that failed, named as Apple's trust engine names it
/// (Security/OSX/sec/Security/SecPolicyChecks.list in Apple's open-source Security project),
/// in that list's order: the first failed check in this order is the one an evaluation reports.
package enum TrustCheck: Int, Sendable, Comparable {
    /// The leaf does not name the host (SSL policy with a host name).
    case sslHostname
    /// A certificate is outside its validity period at the verification date (expired or not yet
    /// valid: Apple reports both as expired).
    case temporalValidity
    /// A key too small for the security level.
    case weakKeySize
    /// A signature made with a digest too weak for the security level.
    case weakSignature
    /// The leaf's key usage does not allow the policy's use.
    case keyUsage
    /// The leaf's extended key usage does not allow the policy's use.
    case extendedKeyUsage
    /// An issuer is not a certificate authority.
    case basicConstraints
    /// The chain is longer than an issuer's path length allows.
    case pathLength
    /// The chain ends in a certificate that is not an anchor (self-signed and untrusted).
    case anchorTrusted
    /// An issuer could not be found (a missing intermediate).
    case missingIntermediate
    /// A critical extension the verifier does not understand.
    case criticalExtensions
    /// A signature that does not verify, or a certificate that cannot be processed.
    case basicCertificateProcessing
    /// A name outside an issuer's name constraints.
    case nameConstraints
    /// A certificate policy the chain does not allow.
    case policyConstraints
    /// A revoked certificate.
    case revocation
    /// A revocation policy that requires a positive answer, which none gave.
    case revocationResponseRequired

    package static func < (lhs: TrustCheck, rhs: TrustCheck) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Whether no change to the evaluation's anchors, date or host can make it pass.
    package var isFatal: Bool {
        switch self {
        case .weakKeySize, .weakSignature, .revocation: true
        default: false
        }
    }
}

/// A failed check and the certificate it failed on (0: the leaf).
package struct TrustFailure: Sendable, Equatable {
    package let check: TrustCheck
    package let index: Int

    package init(_ check: TrustCheck, at index: Int) { (self.check, self.index) = (check, index) }
}
