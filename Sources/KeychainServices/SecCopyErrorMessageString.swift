import Foundation
import KeychainStore

/// Apple's message for a status code.
///
/// Unknown codes get a generic sentence naming the number, as Apple's Security framework does.
@discardableResult
public func SecCopyErrorMessageString(_ status: OSStatus, _ reserved: UnsafeMutableRawPointer?) -> CFString? {
    if let message = appleErrorMessages[status] { return NSString(string: message) }
    return NSString(string: "OSStatus \(status)")
}
