import KeychainModel
import Synchronization

/// Private key bytes from a request, zeroed when the last reference goes. Its description never
/// shows them.
package final class SecretBytes: Sendable, CustomStringConvertible {
    private let storage: Mutex<[UInt8]>

    package init(_ bytes: [UInt8]) { storage = Mutex(bytes) }

    deinit { storage.withLock { zeroize(&$0) } }

    /// Runs `body` with the bytes; they must not be kept past it.
    package func withBytes<Result>(_ body: ([UInt8]) throws -> Result) rethrows -> Result {
        try storage.withLock { try body($0) }
    }

    package var count: Int { storage.withLock { $0.count } }
    package var description: String { "<\(count) secret bytes>" }
}
