import Crypto
import FoundationEssentials
import Synchronization

/// The keyed hashes of the search columns (the first 16 bytes of HMAC-SHA256 under the index
/// key, docs/file-format.md), with the HMAC key set up once per keychain and the most recent
/// results remembered: a search hashes each of its criteria, and programs search for the same
/// few items again and again.
///
/// The remembered inputs are attribute values the process asked about (never secrets); they and
/// the key go when the keychain is closed or its keys are replaced.
package final class IndexHasher: Sendable {
    private let keyed: HMAC<SHA256>
    private let recent = Mutex<[Input: Data]>([:])
    /// Remembered results at most; the memory is dropped whole when it fills.
    private static let capacity = 4_096

    init(key: SymmetricKey) { keyed = HMAC<SHA256>(key: key) }

    func hash(_ input: [UInt8]) -> Data {
        let input = Input(bytes: input)
        if let known = recent.withLock({ $0[input] }) { return known }
        var mac = keyed
        // Through buffers: the generic `Data(_:)` of the code's prefix walks its bytes one at a
        // time, and an update from an array goes through `DataProtocol`'s regions in generic
        // code, both costly beside the hash itself.
        input.bytes.withUnsafeBytes { mac.update(data: $0) }
        let value = mac.finalize().withUnsafeBytes { Data($0.prefix(16)) }
        recent.withLock { recent in
            if recent.count >= Self.capacity { recent.removeAll(keepingCapacity: true) }
            recent[input] = value
        }
        return value
    }

    /// A remembered input, hashed in one pass over its bytes (an array of bytes as a key is
    /// hashed a byte at a time).
    private struct Input: Hashable {
        let bytes: [UInt8]
        func hash(into hasher: inout Hasher) { bytes.withUnsafeBytes { hasher.combine(bytes: $0) } }
    }
}
