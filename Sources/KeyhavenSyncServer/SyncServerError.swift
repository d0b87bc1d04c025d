/// Why the server refused a request, with the HTTP status it answers with. The message names
/// what was wrong with the request; it never holds an entry's contents (which the server cannot
/// read anyway) nor a device's keys.
package struct SyncServerError: Error, Sendable, Hashable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String, Hashable, Sendable {
            case badRequest, unauthorized, notFound, conflict, forbidden, tooLarge, tooManyRequests, quotaExceeded, unavailable, timedOut
        }
        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// Malformed entries, or entries that do not continue the log (400).
        package static let badRequest = Code(.badRequest)
        /// A request that needs a device's signature has none, or a bad one, or an old date (401).
        package static let unauthorized = Code(.unauthorized)
        /// No such account (404).
        package static let notFound = Code(.notFound)
        /// The log moved on since the client's head (or the account exists): pull, then push again (409).
        package static let conflict = Code(.conflict)
        /// A device not on the account, or removed from it (403).
        package static let forbidden = Code(.forbidden)
        /// A request or an entry over the size limits (413).
        package static let tooLarge = Code(.tooLarge)
        /// The client is over its rate (429).
        package static let tooManyRequests = Code(.tooManyRequests)
        /// The account's quota of entries or bytes is used up (507).
        package static let quotaExceeded = Code(.quotaExceeded)
        /// The database could not be reached or failed (503).
        package static let unavailable = Code(.unavailable)
        /// A request body stopped coming, or came slower than the server's minimum rate (408).
        package static let timedOut = Code(.timedOut)

        package var description: String { backing.rawValue }

        /// The HTTP status of this refusal.
        package var httpStatus: Int {
            switch backing {
            case .badRequest: return 400
            case .unauthorized: return 401
            case .forbidden: return 403
            case .notFound: return 404
            case .conflict: return 409
            case .tooLarge: return 413
            case .tooManyRequests: return 429
            case .quotaExceeded: return 507
            case .unavailable: return 503
            case .timedOut: return 408
            }
        }
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "\(code): \(message)" }
}
