import Foundation
import KeychainKeys
import Synchronization

/// A trust evaluation: certificates (the leaf first), the policies they are evaluated against,
/// anchors, and the date; evaluated with OpenSSL's path validation and the system's roots
/// (`/etc/ssl/certs`), its result kept until something it depends on changes (docs/porting.md,
/// "SecTrust").
public final class SecTrust: Sendable, CustomStringConvertible {
    struct Settings: Sendable {
        var certificates: [SecCertificate]
        var policies: [SecPolicy]
        /// Custom anchors; nil: none set.
        var anchors: [SecCertificate]?
        /// Whether only the custom anchors count (set by setting anchors, as on a Mac).
        var anchorsOnly = false
        /// The verification date; nil: the time of each evaluation.
        var verifyDate: Date?
        var networkFetchAllowed = false
    }

    /// What the last evaluation found.
    struct Outcome: Sendable {
        let chain: [SecCertificate]
        let result: SecTrustResultType
        /// The check reported (the first failed in Apple's order) and the certificate it failed on.
        let failure: TrustFailure?
        let date: Date
        let revocationChecked: Bool
    }

    struct State: Sendable {
        var settings: Settings
        var outcome: Outcome?
    }

    let state: Mutex<State>

    init(_ settings: Settings) { state = Mutex(State(settings: settings)) }

    public var description: String {
        let settings = state.withLock { $0.settings }
        return "<SecTrust: \(settings.certificates.count) certificate(s), \(settings.policies.count) polic\(settings.policies.count == 1 ? "y" : "ies")>"
    }

    /// Changes a setting; a kept result no longer holds.
    func change(_ body: (inout Settings) -> Void) {
        state.withLock {
            body(&$0.settings)
            $0.outcome = nil
        }
    }

    /// The kept result, else a new evaluation's.
    func evaluated() -> Outcome {
        if let outcome = state.withLock({ $0.outcome }) { return outcome }
        let settings = state.withLock { $0.settings }
        let outcome = Self.evaluate(settings)
        state.withLock { state in
            // Kept only if nothing changed meanwhile (another thread's setter wins).
            if state.outcome == nil { state.outcome = outcome }
        }
        return outcome
    }

    static func evaluate(_ settings: Settings) -> Outcome {
        let date = settings.verifyDate ?? Date()
        var evaluator = TrustEvaluator(certificates: settings.certificates.map(\.info.der))
        evaluator.date = date
        evaluator.anchors = (settings.anchors ?? []).map(\.info.der)
        evaluator.systemAnchors = !(settings.anchors != nil && settings.anchorsOnly)
        var positiveRevocationRequired = false
        for policy in settings.policies {
            switch policy.kind {
            case .basicX509: break
            case .ssl(let server, let hostname): evaluator.purpose = .tls(server: server, host: hostname)
            case .revocation(let flags): positiveRevocationRequired = positiveRevocationRequired || flags & kSecRevocationRequirePositiveResponse != 0
            }
        }
        guard let verdict = evaluator.evaluate() else {
            return Outcome(chain: settings.certificates.prefix(1).map { $0 }, result: .otherError,
                           failure: TrustFailure(.basicCertificateProcessing, at: 0), date: date, revocationChecked: false)
        }
        var failures = verdict.failures
        if positiveRevocationRequired { failures.append(TrustFailure(.revocationResponseRequired, at: 0)) }
        let chain = verdict.chain.map { der in
            settings.certificates.first { $0.info.der == der } ?? CertificateInfo(der: der).map { SecCertificate($0) }
        }.compactMap { $0 }
        let failure = failures.min { ($0.check, $0.index) < ($1.check, $1.index) }
        let result: SecTrustResultType = failure.map { $0.check.isFatal ? .fatalTrustFailure : .recoverableTrustFailure } ?? .unspecified
        return Outcome(chain: chain, result: result, failure: failure, date: date, revocationChecked: false)
    }
}

public typealias SecTrustRef = SecTrust

/// The outcome of a trust evaluation (Apple's values).
public enum SecTrustResultType: UInt32, Sendable {
    case invalid = 0
    case proceed = 1
    @available(*, deprecated)
    case confirm = 2
    case deny = 3
    /// Trusted: the chain ends in an anchor the system or the caller trusts.
    case unspecified = 4
    /// Not trusted, and a change to the anchors, date or host might make it so.
    case recoverableTrustFailure = 5
    /// Not trusted whatever changes (a revoked certificate, a weak key or signature).
    case fatalTrustFailure = 6
    /// The evaluation could not run (a certificate OpenSSL cannot read).
    case otherError = 7
}

public typealias SecTrustCallback = (SecTrust, SecTrustResultType) -> Void
public typealias SecTrustWithErrorCallback = (SecTrust, Bool, CFError?) -> Void

/// The keys of ``SecTrustCopyResult(_:)``'s dictionary (Apple's values).
nonisolated(unsafe) public let kSecTrustEvaluationDate: CFString = NSString(string: "TrustEvaluationDate")
nonisolated(unsafe) public let kSecTrustExtendedValidation: CFString = NSString(string: "TrustExtendedValidation")
nonisolated(unsafe) public let kSecTrustOrganizationName: CFString = NSString(string: "Organization")
nonisolated(unsafe) public let kSecTrustResultValue: CFString = NSString(string: "TrustResultValue")
nonisolated(unsafe) public let kSecTrustRevocationChecked: CFString = NSString(string: "TrustRevocationChecked")
nonisolated(unsafe) public let kSecTrustRevocationValidUntilDate: CFString = NSString(string: "TrustExpirationDate")
nonisolated(unsafe) public let kSecTrustCertificateTransparency: CFString = NSString(string: "TrustCertificateTransparency")
