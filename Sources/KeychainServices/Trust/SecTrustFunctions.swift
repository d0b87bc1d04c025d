import Dispatch
import Foundation
import KeychainKeys

/// A trust for `certificates` (one ``SecCertificate``, or an array of them with the leaf first)
/// against `policies` (one ``SecPolicy``, an array of them, or nil for the basic X.509 policy).
/// errSecParam for anything else, or no certificate.
@discardableResult
public func SecTrustCreateWithCertificates(_ certificates: CFTypeRef, _ policies: CFTypeRef?,
                                          _ trust: UnsafeMutablePointer<SecTrust?>) -> OSStatus {
    guard let certificates = trustCertificates(certificates), !certificates.isEmpty else { return errSecParam }
    var chosen = [SecPolicyCreateBasicX509()]
    if let policies {
        guard let given = trustPolicies(policies) else { return errSecParam }
        chosen = given
    }
    trust.pointee = SecTrust(SecTrust.Settings(certificates: certificates, policies: chosen))
    return errSecSuccess
}

/// Replaces the policies (one ``SecPolicy`` or an array); errSecParam for anything else.
@discardableResult
public func SecTrustSetPolicies(_ trust: SecTrust, _ policies: CFTypeRef) -> OSStatus {
    guard let given = trustPolicies(policies) else { return errSecParam }
    trust.change { $0.policies = given }
    return errSecSuccess
}

/// The policies, as an array.
@discardableResult
public func SecTrustCopyPolicies(_ trust: SecTrust, _ policies: UnsafeMutablePointer<CFArray?>) -> OSStatus {
    policies.pointee = NSArray(array: trust.state.withLock { $0.settings.policies })
    return errSecSuccess
}

/// Trusts `anchorCertificates` as anchors, and (as on a Mac) only them, until
/// ``SecTrustSetAnchorCertificatesOnly(_:_:)`` says false. An empty array restores the system's
/// roots alone. errSecParam for an array holding anything but certificates.
@discardableResult
public func SecTrustSetAnchorCertificates(_ trust: SecTrust, _ anchorCertificates: CFArray?) -> OSStatus {
    guard let array = anchorCertificates else {
        trust.change { ($0.anchors, $0.anchorsOnly) = (nil, false) }
        return errSecSuccess
    }
    guard let anchors = trustCertificates(array) else { return errSecParam }
    trust.change { ($0.anchors, $0.anchorsOnly) = (anchors.isEmpty ? nil : anchors, !anchors.isEmpty) }
    return errSecSuccess
}

/// The custom anchors (nil when none are set).
@discardableResult
public func SecTrustCopyCustomAnchorCertificates(_ trust: SecTrust, _ anchors: UnsafeMutablePointer<CFArray?>) -> OSStatus {
    anchors.pointee = trust.state.withLock { $0.settings.anchors }.map { NSArray(array: $0) }
    return errSecSuccess
}

/// Whether only the custom anchors count (true), or the system's roots too (false).
@discardableResult
public func SecTrustSetAnchorCertificatesOnly(_ trust: SecTrust, _ anchorCertificatesOnly: Bool) -> OSStatus {
    trust.change { $0.anchorsOnly = anchorCertificatesOnly }
    return errSecSuccess
}

/// The date the certificates must be valid at (else the time of each evaluation).
@discardableResult
public func SecTrustSetVerifyDate(_ trust: SecTrust, _ verifyDate: CFDate) -> OSStatus {
    trust.change { $0.verifyDate = verifyDate as Date }
    return errSecSuccess
}

/// The verification date as seconds since 2001-01-01 (Core Foundation's absolute time).
public func SecTrustGetVerifyTime(_ trust: SecTrust) -> CFAbsoluteTime {
    (trust.state.withLock { $0.settings.verifyDate } ?? Date()).timeIntervalSinceReferenceDate
}

/// Kept for Apple's signature: Keyhaven fetches no missing intermediate or revocation answer, so
/// the setting changes nothing but what ``SecTrustGetNetworkFetchAllowed(_:_:)`` says.
@discardableResult
public func SecTrustSetNetworkFetchAllowed(_ trust: SecTrust, _ allowFetch: Bool) -> OSStatus {
    trust.change { $0.networkFetchAllowed = allowFetch }
    return errSecSuccess
}

@discardableResult
public func SecTrustGetNetworkFetchAllowed(_ trust: SecTrust, _ allowFetch: UnsafeMutablePointer<DarwinBoolean>) -> OSStatus {
    allowFetch.pointee = DarwinBoolean(trust.state.withLock { $0.settings.networkFetchAllowed })
    return errSecSuccess
}

/// Evaluates (or takes the kept result): true when the chain ends in a trusted anchor and every
/// policy holds. Otherwise `error` gets an `NSOSStatusErrorDomain` error whose code is the OSStatus
/// of the first failed check in Apple's order: `errSecHostNameMismatch`, `errSecCertificateExpired`
/// (expired or not yet valid), `errSecNotTrusted` (an untrusted root, a self-signed leaf),
/// `errSecCreateChainFailed` (a missing intermediate), and so on.
public func SecTrustEvaluateWithError(_ trust: SecTrust, _ error: UnsafeMutablePointer<CFError?>?) -> Bool {
    let outcome = trust.evaluated()
    guard let failure = outcome.failure else { return true }
    error?.pointee = trustError(failure, outcome: outcome)
    return false
}

/// Evaluates on another thread and calls `result` on `queue` with what
/// ``SecTrustEvaluateWithError(_:_:)`` would give.
@discardableResult
public func SecTrustEvaluateAsyncWithError(_ trust: SecTrust, _ queue: DispatchQueue,
                                           _ result: @escaping SecTrustWithErrorCallback) -> OSStatus {
    let callback = UncheckedCallback(result)
    DispatchQueue.global().async {
        var error: CFError?
        let trusted = SecTrustEvaluateWithError(trust, &error)
        let answer = UncheckedCallback((trusted, error))
        queue.async { callback.value(trust, answer.value.0, answer.value.1) }
    }
    return errSecSuccess
}

/// Apple's deprecated evaluation: the result type, errSecSuccess whatever it is.
@available(*, deprecated, renamed: "SecTrustEvaluateWithError")
@discardableResult
public func SecTrustEvaluate(_ trust: SecTrust, _ result: UnsafeMutablePointer<SecTrustResultType>?) -> OSStatus {
    result?.pointee = trust.evaluated().result
    return errSecSuccess
}

/// The result of the last evaluation; `.invalid` before any (this does not evaluate).
@discardableResult
public func SecTrustGetTrustResult(_ trust: SecTrust, _ result: UnsafeMutablePointer<SecTrustResultType>) -> OSStatus {
    result.pointee = trust.state.withLock { $0.outcome?.result } ?? .invalid
    return errSecSuccess
}

/// The last evaluation's result (evaluating first if needed): `kSecTrustResultValue`,
/// `kSecTrustEvaluationDate` and `kSecTrustRevocationChecked` (false: no revocation answer is
/// fetched).
public func SecTrustCopyResult(_ trust: SecTrust) -> CFDictionary? {
    let outcome = trust.evaluated()
    return NSDictionary(dictionary: [
        kSecTrustResultValue as String: NSNumber(value: outcome.result.rawValue),
        kSecTrustEvaluationDate as String: outcome.date as NSDate,
        kSecTrustRevocationChecked as String: NSNumber(value: outcome.revocationChecked),
    ])
}

/// How many certificates the evaluated chain holds (evaluating first if needed): leaf to anchor
/// when it was built, else as far as it went.
public func SecTrustGetCertificateCount(_ trust: SecTrust) -> CFIndex {
    trust.evaluated().chain.count
}

/// The evaluated chain, leaf first (evaluating first if needed).
public func SecTrustCopyCertificateChain(_ trust: SecTrust) -> CFArray? {
    NSArray(array: trust.evaluated().chain)
}

/// The certificate at `ix` of the evaluated chain; nil past its end.
@available(*, deprecated, renamed: "SecTrustCopyCertificateChain")
public func SecTrustGetCertificateAtIndex(_ trust: SecTrust, _ ix: CFIndex) -> SecCertificate? {
    let chain = trust.evaluated().chain
    return chain.indices.contains(ix) ? chain[ix] : nil
}

/// The leaf's public key; nil for a key type Keyhaven does not support.
public func SecTrustCopyKey(_ trust: SecTrust) -> SecKey? {
    trust.state.withLock { $0.settings.certificates.first }.flatMap { SecCertificateCopyKey($0) }
}

/// The leaf's public key (Apple's deprecated name for ``SecTrustCopyKey(_:)``).
@available(*, deprecated, renamed: "SecTrustCopyKey")
public func SecTrustCopyPublicKey(_ trust: SecTrust) -> SecKey? {
    SecTrustCopyKey(trust)
}

/// Certificates from a ``SecCertificate`` or an array of them; nil for anything else.
func trustCertificates(_ value: CFTypeRef) -> [SecCertificate]? {
    if let certificate = value as? SecCertificate { return [certificate] }
    guard let array = value as? NSArray else { return nil }
    let certificates = array.compactMap { $0 as? SecCertificate }
    return certificates.count == array.count ? certificates : nil
}

/// Policies from a ``SecPolicy`` or a non-empty array of them; nil for anything else.
func trustPolicies(_ value: CFTypeRef) -> [SecPolicy]? {
    if let policy = value as? SecPolicy { return [policy] }
    guard let array = value as? NSArray, array.count > 0 else { return nil }
    let policies = array.compactMap { $0 as? SecPolicy }
    return policies.count == array.count ? policies : nil
}

/// The error a failed evaluation gives: Apple's OSStatus for the check, and a sentence naming the
/// certificate (its subject summary) as a Mac's does.
func trustError(_ failure: TrustFailure, outcome: SecTrust.Outcome) -> CFError {
    let certificate = outcome.chain.indices.contains(failure.index) ? outcome.chain[failure.index] : outcome.chain.first
    let name = "“\(certificate?.info.subjectSummary ?? "certificate")”"
    let (status, words): (OSStatus, String) = switch failure.check {
    case .sslHostname: (errSecHostNameMismatch, "certificate name does not match input")
    case .temporalValidity:
        (errSecCertificateExpired, (certificate?.info.notBefore).map { outcome.date < $0 } == true ? "certificate is not yet valid" : "certificate is expired")
    case .weakKeySize: (errSecUnsupportedKeySize, "certificate is using a broken key size")
    case .weakSignature: (errSecInvalidDigestAlgorithm, "certificate is using a broken signature algorithm")
    case .keyUsage: (errSecInvalidKeyUsageForPolicy, "certificate's key usage does not allow this use")
    case .extendedKeyUsage: (errSecInvalidExtendedKeyUsage, "certificate is not permitted for this usage")
    case .basicConstraints: (errSecNoBasicConstraints, "certificate is not a certificate authority")
    case .pathLength: (errSecPathLengthConstraintExceeded, "certificate's chain is longer than its issuer allows")
    case .anchorTrusted: (errSecNotTrusted, "certificate is not trusted")
    case .missingIntermediate: (errSecCreateChainFailed, "certificate's issuer was not found")
    case .criticalExtensions: (errSecUnknownCriticalExtensionFlag, "certificate has an unknown critical extension")
    case .basicCertificateProcessing: (errSecInvalidCertificateRef, "certificate could not be verified")
    case .nameConstraints: (errSecInvalidName, "certificate's name is not permitted by its issuer")
    case .policyConstraints: (errSecInvalidPolicyIdentifiers, "certificate's policies are not permitted")
    case .revocation: (errSecCertificateRevoked, "certificate is revoked")
    case .revocationResponseRequired: (errSecIncompleteCertRevocationCheck, "certificate's revocation was not checked")
    }
    return NSError(domain: "NSOSStatusErrorDomain", code: Int(status), userInfo: [NSLocalizedDescriptionKey: "\(name) \(words)"])
}

/// A value handed between queues as ``SecTrustEvaluateAsyncWithError(_:_:_:)`` does: the caller's
/// callback and the CFError it gets are Apple's non-Sendable types, used on one queue at a time.
private struct UncheckedCallback<Value>: @unchecked Sendable {
    let value: Value
    init(_ value: Value) { self.value = value }
}
