/// Why a call to the sync server failed: the server could not be reached, it refused (with the
/// code it named: `conflict`, `forbidden`, ...), or what it answered is not what the protocol
/// says. Messages name the server and the failure, never an entry's contents.
package struct SyncClientError: Error, Sendable, Hashable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String, Hashable, Sendable {
            case insecureServer, unreachable, refused, malformedAnswer
        }
        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// A server URL that is not https, nor http to a loopback address.
        package static let insecureServer = Code(.insecureServer)
        /// No connection, a timeout, or a dropped connection.
        package static let unreachable = Code(.unreachable)
        /// The server answered with a refusal (``SyncClientError/serverCode`` says which).
        package static let refused = Code(.refused)
        /// An answer that does not decode.
        package static let malformedAnswer = Code(.malformedAnswer)

        package var description: String { backing.rawValue }
    }

    package let code: Code
    /// For a refusal: the HTTP status and the server's code (`conflict`, `forbidden`, `notFound`, ...).
    package let status: Int?
    package let serverCode: String?
    package let message: String

    package init(_ code: Code, _ message: String, status: Int? = nil, serverCode: String? = nil) {
        (self.code, self.message, self.status, self.serverCode) = (code, message, status, serverCode)
    }

    /// The log moved on: pull, then push again.
    package var isConflict: Bool { serverCode == "conflict" }

    package var description: String { "\(code): \(message)" }
}
