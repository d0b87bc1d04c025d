import Foundation
import KeychainServices
import KeychainStore

/// The longest reuse duration, as LocalAuthentication's
/// `LATouchIDAuthenticationMaximumAllowableReuseDuration`.
public let kSecUserPresenceMaximumReuseDuration: TimeInterval = 300

/// How long one entry of the keychain password, for an item whose access control asks for the
/// user's presence (`.userPresence`, `.devicePasscode`, `.applicationPassword`), serves this
/// process's later uses of items of that keychain: the agent asks again after that. 0 (the
/// default): at every use. The Linux stand-in for an `LAContext`'s
/// `touchIDAuthenticationAllowableReuseDuration` passed as `kSecUseAuthenticationContext`;
/// values are clamped to 0...300 seconds.
@discardableResult
public func SecUserPresenceSetReuseDuration(_ seconds: TimeInterval) -> OSStatus {
    guard seconds.isFinite else { return errSecParam }
    let clamped = UInt32(max(0, min(seconds, kSecUserPresenceMaximumReuseDuration)).rounded(.down))
    AccessGroupConfiguration.presenceReuse.withLock { $0 = clamped }
    return errSecSuccess
}
