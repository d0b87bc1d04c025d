/// A request the SSH agent cannot take: malformed, or asking for what it does not do.
///
/// The message says what was wrong with the request; it never holds key material, passphrases or
/// the data to sign. Codes are open-ended values, so that one can be added without breaking a
/// `switch` elsewhere.
package struct SSHAgentError: Error, Sendable, Equatable, CustomStringConvertible {
    package struct Code: RawRepresentable, Hashable, Sendable {
        package let rawValue: String
        package init(rawValue: String) { self.rawValue = rawValue }

        /// The bytes do not follow the protocol (a length past the end, trailing bytes, a
        /// negative mpint, text that is not UTF-8, a private half that is not its public half's).
        package static let malformed = Code(rawValue: "malformed")
        /// Well formed, but for a key type or constraint the agent does not support.
        package static let unsupported = Code(rawValue: "unsupported")
        /// The agent is locked (`ssh-add -x`): it holds its keys but uses and lists none.
        package static let locked = Code(rawValue: "locked")
        /// The user, or a rule the user set, refused this use of a key.
        package static let refused = Code(rawValue: "refused")
    }

    package let code: Code
    package let message: String
    package var description: String { "\(code.rawValue): \(message)" }

    package init(_ code: Code, _ message: String) {
        (self.code, self.message) = (code, message)
    }
}
