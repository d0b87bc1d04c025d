#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
// Implementation-only: a target that sees Keyhaven's modules without depending on them has no map
// of its C modules (docs/architecture.md); no type here stores a C type.
@_implementationOnly import COpenSSL
import FoundationEssentials

/// X.509 path validation with OpenSSL's verifier (`X509_verify_cert`): the chain from a leaf
/// through the given intermediates to an anchor, each certificate's validity at a date, the host
/// name (RFC 6125, no partial wildcards), the purpose's extended key usage, basic constraints and
/// path lengths. Every failure is recorded (the verifier goes on past each), with the certificate
/// it concerns, so that the first in Apple's order can be reported.
package struct TrustEvaluator: Sendable {
    /// What the leaf must be good for.
    package enum Purpose: Sendable, Equatable {
        /// Any (a basic X.509 policy).
        case any
        /// A TLS server, or client; `host` (a DNS name or an IP address) must be the leaf's.
        case tls(server: Bool, host: String?)
    }

    /// The certificates as given: the leaf first, then candidates for its chain.
    package var certificates: [[UInt8]]
    /// Certificates trusted as anchors, whatever their issuer (a Mac's custom anchors).
    package var anchors: [[UInt8]] = []
    /// Whether the system's roots (OpenSSL's default paths: /etc/ssl/certs) are anchors too.
    package var systemAnchors = true
    package var purpose = Purpose.any
    /// The date the certificates must be valid at.
    package var date = Date()

    package init(certificates: [[UInt8]]) { self.certificates = certificates }

    /// The outcome: the chain as built (leaf first, as far as it went) and what failed.
    package struct Verdict: Sendable, Equatable {
        package let chain: [[UInt8]]
        package let failures: [TrustFailure]
    }

    /// Evaluates; nil when a certificate cannot be parsed or OpenSSL cannot run the evaluation.
    package func evaluate() -> Verdict? {
        defer { ERR_clear_error() }
        guard let leafDER = certificates.first, let leaf = OpenSSLKey.certificate(leafDER) else { return nil }
        defer { X509_free(leaf) }
        guard let store = X509_STORE_new() else { return nil }
        defer { X509_STORE_free(store) }
        if systemAnchors, X509_STORE_set_default_paths(store) != 1 { return nil }
        for der in anchors {
            guard let anchor = OpenSSLKey.certificate(der) else { return nil }
            // Adding one already there is not an error; the store keeps its own reference.
            _ = X509_STORE_add_cert(store, anchor)
            X509_free(anchor)
        }
        guard let untrusted = keyhaven_sk_X509_new_null() else { return nil }
        defer { keyhaven_sk_X509_pop_free(untrusted) }
        for der in certificates.dropFirst() {
            guard let certificate = OpenSSLKey.certificate(der) else { return nil }
            guard keyhaven_sk_X509_push(untrusted, certificate) > 0 else { X509_free(certificate); return nil }
        }
        guard let context = X509_STORE_CTX_new() else { return nil }
        defer { X509_STORE_CTX_free(context) }
        guard X509_STORE_CTX_init(context, store, leaf, untrusted) == 1, let parameters = X509_STORE_CTX_get0_param(context) else { return nil }
        // Any anchor counts, self-signed or not, as Apple's custom anchors do.
        X509_VERIFY_PARAM_set_flags(parameters, UInt(X509_V_FLAG_PARTIAL_CHAIN))
        X509_VERIFY_PARAM_set_time(parameters, time_t(date.timeIntervalSince1970.rounded(.down)))
        if case .tls(let server, let host) = purpose {
            guard X509_STORE_CTX_set_purpose(context, server ? X509_PURPOSE_SSL_SERVER : X509_PURPOSE_SSL_CLIENT) == 1 else { return nil }
            if let host, !host.isEmpty {
                X509_VERIFY_PARAM_set_hostflags(parameters, UInt32(X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS))
                let literal = Self.isIPAddress(host)
                let set = literal ? X509_VERIFY_PARAM_set1_ip_asc(parameters, host) : X509_VERIFY_PARAM_set1_host(parameters, host, 0)
                guard set == 1 else {
                    // Not a name OpenSSL can compare (an empty label, a NUL): no certificate names it.
                    return Verdict(chain: [leafDER], failures: [TrustFailure(.sslHostname, at: 0)])
                }
            }
        }
        let recorder = Recorder()
        let box = Unmanaged.passRetained(recorder)
        defer { box.release() }
        guard X509_STORE_CTX_set_ex_data(context, 0, box.toOpaque()) == 1 else { return nil }
        X509_STORE_CTX_set_verify_cb(context) { ok, context in
            guard ok == 0, let context, let data = X509_STORE_CTX_get_ex_data(context, 0) else { return ok }
            let recorder = Unmanaged<Recorder>.fromOpaque(data).takeUnretainedValue()
            recorder.record(error: X509_STORE_CTX_get_error(context), depth: X509_STORE_CTX_get_error_depth(context))
            // Go on: every failure is wanted, not only the first.
            return 1
        }
        let result = X509_verify_cert(context)
        var chain: [[UInt8]] = []
        if let built = X509_STORE_CTX_get1_chain(context) {
            for index in 0..<keyhaven_sk_X509_num(built) {
                if let certificate = keyhaven_sk_X509_value(built, index), let der = try? OpenSSLKey.encoded(certificate, i2d_X509) { chain.append(der) }
            }
            keyhaven_sk_X509_pop_free(built)
        }
        if chain.isEmpty { chain = [leafDER] }
        var failures = recorder.failures
        if result != 1 && failures.isEmpty { failures = [TrustFailure(.basicCertificateProcessing, at: 0)] }
        return Verdict(chain: chain, failures: failures)
    }

    /// Collects the verifier's errors (on the evaluating thread only).
    private final class Recorder {
        var failures: [TrustFailure] = []

        func record(error: Int32, depth: Int32) {
            let failure = TrustFailure(TrustEvaluator.check(for: error), at: Int(max(0, depth)))
            if !failures.contains(failure) { failures.append(failure) }
        }
    }

    /// Apple's check for an OpenSSL verification error.
    static func check(for error: Int32) -> TrustCheck {
        switch error {
        case X509_V_ERR_HOSTNAME_MISMATCH, X509_V_ERR_IP_ADDRESS_MISMATCH: .sslHostname
        case X509_V_ERR_CERT_HAS_EXPIRED, X509_V_ERR_CERT_NOT_YET_VALID, X509_V_ERR_ERROR_IN_CERT_NOT_BEFORE_FIELD,
             X509_V_ERR_ERROR_IN_CERT_NOT_AFTER_FIELD: .temporalValidity
        case X509_V_ERR_EE_KEY_TOO_SMALL, X509_V_ERR_CA_KEY_TOO_SMALL: .weakKeySize
        case X509_V_ERR_CA_MD_TOO_WEAK: .weakSignature
        case X509_V_ERR_KEYUSAGE_NO_DIGITAL_SIGNATURE, X509_V_ERR_KEYUSAGE_NO_CERTSIGN: .keyUsage
        case X509_V_ERR_INVALID_PURPOSE: .extendedKeyUsage
        case X509_V_ERR_INVALID_CA, X509_V_ERR_INVALID_NON_CA: .basicConstraints
        case X509_V_ERR_PATH_LENGTH_EXCEEDED, X509_V_ERR_CERT_CHAIN_TOO_LONG, X509_V_ERR_PATHLEN_INVALID_FOR_NON_CA: .pathLength
        case X509_V_ERR_DEPTH_ZERO_SELF_SIGNED_CERT, X509_V_ERR_SELF_SIGNED_CERT_IN_CHAIN, X509_V_ERR_CERT_UNTRUSTED,
             X509_V_ERR_CERT_REJECTED: .anchorTrusted
        case X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT, X509_V_ERR_UNABLE_TO_GET_ISSUER_CERT_LOCALLY,
             X509_V_ERR_UNABLE_TO_VERIFY_LEAF_SIGNATURE: .missingIntermediate
        case X509_V_ERR_UNHANDLED_CRITICAL_EXTENSION: .criticalExtensions
        case X509_V_ERR_PERMITTED_VIOLATION, X509_V_ERR_EXCLUDED_VIOLATION, X509_V_ERR_SUBTREE_MINMAX,
             X509_V_ERR_UNSUPPORTED_NAME_SYNTAX, X509_V_ERR_UNSUPPORTED_CONSTRAINT_TYPE, X509_V_ERR_UNSUPPORTED_CONSTRAINT_SYNTAX: .nameConstraints
        case X509_V_ERR_INVALID_POLICY_EXTENSION, X509_V_ERR_NO_EXPLICIT_POLICY: .policyConstraints
        case X509_V_ERR_CERT_REVOKED: .revocation
        default: .basicCertificateProcessing
        }
    }

    static func isIPAddress(_ host: String) -> Bool {
        var v4 = in_addr(), v6 = in6_addr()
        return inet_pton(AF_INET, host, &v4) == 1 || inet_pton(AF_INET6, host, &v6) == 1
    }
}
