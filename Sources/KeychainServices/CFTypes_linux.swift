import Foundation

// Core Foundation's names on Linux, as the Foundation classes that CF types bridge to on Apple
// platforms. These shapes are what the wrappers' code (keychain-swift, KeychainAccess, Valet,
// SimpleKeychain, SwiftKeychainWrapper, Locksmith) needs to compile unchanged: each was checked
// by changing it and watching a wrapper fail (docs/compatibility.md, "CF types on Linux").

/// A result code: `errSecSuccess` (0) or a negative `errSec*` value.
public typealias OSStatus = Int32
public typealias CFTypeRef = AnyObject
public typealias CFString = NSString
public typealias CFDictionary = NSDictionary
public typealias CFArray = NSArray
public typealias CFData = NSData
public typealias CFDate = NSDate
public typealias CFBoolean = NSNumber
public typealias CFNumber = NSNumber
public typealias CFError = NSError
public typealias CFErrorDomain = CFString
public typealias CFIndex = Int
/// Seconds since 2001-01-01 00:00:00 UTC.
public typealias CFAbsoluteTime = Double
public typealias CFOptionFlags = UInt
public typealias CFStringRef = CFString
public typealias CFDictionaryRef = CFDictionary
public typealias CFArrayRef = CFArray
public typealias CFDataRef = CFData
public typealias CFErrorRef = CFError

/// Core Foundation's allocator. Only the default allocator exists here; pass nil or
/// `kCFAllocatorDefault`.
public final class CFAllocator: Sendable {
    private init() {}
}

/// The default allocator: nil, as its value is on Apple platforms.
public let kCFAllocatorDefault: CFAllocator! = nil

/// `true` as a Core Foundation boolean (implicitly unwrapped, as Apple declares it).
public let kCFBooleanTrue: CFBoolean! = NSNumber(value: true)
/// `false` as a Core Foundation boolean.
public let kCFBooleanFalse: CFBoolean! = NSNumber(value: false)

/// The Info.plist key of a bundle's identifier.
nonisolated(unsafe) public let kCFBundleIdentifierKey: CFString = NSString(string: "CFBundleIdentifier")

/// No error (Carbon's name for zero).
public let noErr: OSStatus = 0

/// The error's code.
@discardableResult
public func CFErrorGetCode(_ err: CFError!) -> CFIndex { err.code }
/// The error's domain.
@discardableResult
public func CFErrorGetDomain(_ err: CFError!) -> CFErrorDomain! { NSString(string: err.domain) }
/// The error's user-info dictionary.
@discardableResult
public func CFErrorCopyUserInfo(_ err: CFError!) -> CFDictionary! { NSDictionary(dictionary: err.userInfo) }

/// A C boolean, as Apple's C APIs hand it to Swift.
public struct DarwinBoolean: ExpressibleByBooleanLiteral, Sendable, Hashable, CustomStringConvertible {
    private var value: UInt8

    public init(_ value: Bool) { self.value = value ? 1 : 0 }
    public init(booleanLiteral value: Bool) { self.init(value) }

    /// The value as a Swift `Bool`.
    public var boolValue: Bool { value != 0 }
    public var description: String { boolValue.description }
}

extension Bool {
    /// A Swift `Bool` from a C boolean.
    public init(_ value: DarwinBoolean) { self = value.boolValue }
}
