/// Bytes that do not decode as the value they should hold: cut short, malformed, or larger than
/// the format allows. The byte codec's error, whoever reads the bytes: the keychain file (where
/// it becomes ``StoreError/Code/decode``), the agent protocol, or a sync server's request body
/// (a 400).
///
/// A struct over a private enum, so new codes can be added without breaking anyone who switches
/// over them. The message says what was wrong with the bytes, never what they held.
package struct CodecError: Error, Sendable, Hashable, CustomStringConvertible {
    package struct Code: Sendable, Hashable, CustomStringConvertible {
        fileprivate enum Base: String, Sendable, Hashable {
            case truncated, malformed, tooLarge
        }
        fileprivate let base: Base
        package var description: String { base.rawValue }

        /// The bytes end before the value does.
        package static let truncated = Code(base: .truncated)
        /// The bytes are not a value of the type: an unknown tag, invalid UTF-8, a repeated key,
        /// trailing bytes.
        package static let malformed = Code(base: .malformed)
        /// A count or a length beyond what the format allows, or beyond the bytes there are.
        package static let tooLarge = Code(base: .tooLarge)
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "CodecError.\(code): \(message)" }
}

extension StoreError {
    /// Stored or received bytes that do not decode: ``StoreError/Code/decode``.
    package init(_ error: CodecError) {
        self.init(.decode, error.message)
    }
}
