import Foundation
// URLSession and its challenges live in FoundationNetworking on Linux.
import FoundationNetworking
import KeychainServices

// What Apple-platform code reaches for beside the Security framework once `#if canImport(Security)`
// is true, and swift-corelibs-foundation lacks: Apple's signatures, with what they do on Linux
// (docs/porting.md, "canImport(Security) in your dependencies").

/// The key of a download's resume data in a `URLError`'s user info (Apple's value).
public let NSURLSessionDownloadTaskResumeData = "NSURLSessionDownloadTaskResumeData"

/// The authentication methods of certificate challenges (Apple's values). swift-corelibs-foundation
/// marks its own unavailable; these, in a module that imports it, take their place. URLSession on
/// Linux issues neither challenge, so code that handles them compiles and is never called.
public let NSURLAuthenticationMethodServerTrust = "NSURLAuthenticationMethodServerTrust"
public let NSURLAuthenticationMethodClientCertificate = "NSURLAuthenticationMethodClientCertificate"

extension URLProtectionSpace {
    /// The server's trust, in a server-trust challenge. URLSession on Linux verifies TLS itself
    /// (libcurl, with the system's roots) and issues no server-trust challenge, so there is never
    /// one to give: nil. To evaluate a chain you hold, use ``SecTrustCreateWithCertificates(_:_:_:)``.
    public var serverTrust: SecTrust? { nil }
}

extension URLCredential {
    /// A credential that accepts `trust` in a server-trust challenge. URLSession on Linux asks for
    /// none (``URLProtectionSpace/serverTrust`` is nil), so it is never presented; it carries no
    /// user and no password.
    public convenience init(trust: SecTrust) {
        self.init(user: "", password: "", persistence: .none)
    }
}
