/// The agent protocol's message numbers (RFC 9987, section 6.1; OpenSSH's PROTOCOL.agent).
package enum MessageType {
    // Replies.
    package static let failure: UInt8 = 5
    package static let success: UInt8 = 6
    package static let identitiesAnswer: UInt8 = 12
    package static let signResponse: UInt8 = 14
    package static let extensionFailure: UInt8 = 28
    package static let extensionResponse: UInt8 = 29
    // Requests.
    package static let requestIdentities: UInt8 = 11
    package static let signRequest: UInt8 = 13
    package static let addIdentity: UInt8 = 17
    package static let removeIdentity: UInt8 = 18
    package static let removeAllIdentities: UInt8 = 19
    package static let addSmartcardKey: UInt8 = 20
    package static let removeSmartcardKey: UInt8 = 21
    package static let lock: UInt8 = 22
    package static let unlock: UInt8 = 23
    package static let addIdentityConstrained: UInt8 = 25
    package static let addSmartcardKeyConstrained: UInt8 = 26
    package static let `extension`: UInt8 = 27
}
