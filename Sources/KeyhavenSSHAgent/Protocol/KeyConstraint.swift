/// A constraint on an added key (RFC 9987, section 3.2.6; OpenSSH's PROTOCOL.agent).
package enum KeyConstraint: Sendable, Equatable {
    /// Forget the key this many seconds after it is added (`ssh-add -t`).
    case lifetime(seconds: UInt32)
    /// Ask the user before each use (`ssh-add -c`).
    case confirm
    /// `restrict-destination-v00@openssh.com` (`ssh-add -h`): the hops the key may be used on,
    /// as the encoded list of constraints.
    case restrictDestination(constraints: [UInt8])
    /// `associated-certs-v00@openssh.com`: certificates to graft onto a token's keys.
    case associatedCertificates(certificatesOnly: Bool, certificates: [UInt8])
    /// `sk-provider@openssh.com`: the library that holds a security key's private half.
    case securityKeyProvider(String)

    static let lifetimeType: UInt8 = 1
    static let confirmType: UInt8 = 2
    static let extensionType: UInt8 = 255

    /// Reads constraints until the message ends; an unknown one fails the request, as OpenSSH's
    /// agent fails it (a constraint the agent ignored would loosen what the user asked for).
    static func readAll(_ reader: inout SSHReader) throws(SSHAgentError) -> [KeyConstraint] {
        var constraints: [KeyConstraint] = []
        while !reader.isAtEnd {
            switch try reader.byte() {
            case lifetimeType: constraints.append(.lifetime(seconds: try reader.uint32()))
            case confirmType: constraints.append(.confirm)
            case extensionType: constraints.append(try readExtension(&reader))
            case let other: throw SSHAgentError(.unsupported, "key constraint \(other) is not one the agent knows")
            }
        }
        return constraints
    }

    private static func readExtension(_ reader: inout SSHReader) throws(SSHAgentError) -> KeyConstraint {
        switch try reader.text() {
        case "restrict-destination-v00@openssh.com": return .restrictDestination(constraints: try reader.string())
        case "associated-certs-v00@openssh.com":
            return .associatedCertificates(certificatesOnly: try reader.bool(), certificates: try reader.string())
        case "sk-provider@openssh.com": return .securityKeyProvider(try reader.text())
        case let name: throw SSHAgentError(.unsupported, "key constraint \(name) is not one the agent knows")
        }
    }
}
