import Foundation

/// What a trust evaluation checks a certificate for: any use (basic X.509), a TLS server or client
/// (and its host), or revocation.
///
/// Immutable; two policies are equal when they ask the same.
public final class SecPolicy: Hashable, Sendable, CustomStringConvertible {
    enum Kind: Hashable, Sendable {
        case basicX509
        case ssl(server: Bool, hostname: String?)
        case revocation(CFOptionFlags)
    }

    let kind: Kind

    init(_ kind: Kind) { self.kind = kind }

    public static func == (lhs: SecPolicy, rhs: SecPolicy) -> Bool { lhs.kind == rhs.kind }
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    public var description: String {
        switch kind {
        case .basicX509: "<SecPolicy: basicX509>"
        case .ssl(let server, let hostname): "<SecPolicy: \(server ? "sslServer" : "sslClient")\(hostname.map { " \($0)" } ?? "")>"
        case .revocation(let flags): "<SecPolicy: revocation \(flags)>"
        }
    }
}

public typealias SecPolicyRef = SecPolicy

/// The revocation methods and options of ``SecPolicyCreateRevocation(_:)`` (Apple's values).
public let kSecRevocationOCSPMethod: CFOptionFlags = 1 << 0
public let kSecRevocationCRLMethod: CFOptionFlags = 1 << 1
public let kSecRevocationPreferCRL: CFOptionFlags = 1 << 2
public let kSecRevocationRequirePositiveResponse: CFOptionFlags = 1 << 3
public let kSecRevocationNetworkAccessDisabled: CFOptionFlags = 1 << 4
public let kSecRevocationUseAnyAvailableMethod: CFOptionFlags = kSecRevocationOCSPMethod | kSecRevocationCRLMethod

/// The basic X.509 policy: a chain to an anchor, each certificate valid at the verification date,
/// basic constraints and path lengths; no use or name is required of the leaf.
public func SecPolicyCreateBasicX509() -> SecPolicy { SecPolicy(.basicX509) }

/// The TLS policy: the basic checks, and the leaf's extended key usage allows a server (`server`
/// true) or a client; a `hostname` (a DNS name, `*.` wildcards as RFC 6125 allows them, or an IP
/// address) must be named by the leaf's alternative names.
public func SecPolicyCreateSSL(_ server: Bool, _ hostname: CFString?) -> SecPolicy {
    SecPolicy(.ssl(server: server, hostname: hostname.map { String($0) }))
}

/// Asks for revocation checking. Keyhaven fetches no CRL or OCSP answer: an evaluation with this
/// policy reports revocation as not checked (`kSecTrustRevocationChecked` false in
/// ``SecTrustCopyResult(_:)``), and fails (`errSecIncompleteCertRevocationCheck`) only when
/// `kSecRevocationRequirePositiveResponse` is set, as a Mac does when no answer comes.
public func SecPolicyCreateRevocation(_ revocationFlags: CFOptionFlags) -> SecPolicy? {
    SecPolicy(.revocation(revocationFlags))
}
