import Crypto
import FoundationEssentials

/// Hashing by Apple's hash names, and digests supplied by the caller as swift-crypto digest values.
///
/// Apple's `digest-*` algorithms take a digest the caller computed. swift-crypto's signing APIs
/// take a `Digest` value and read the hash function from its type (RSA's DigestInfo), but offer no
/// public way to make one from bytes. `digest(_:bytes:)` builds one by copying the bytes into the
/// digest type's storage, which is the digest bytes in order (SHA-1's is padded to 24 bytes, the
/// padding zero); `isLayoutUnderstood` checks exactly that on a real digest first, so a future
/// swift-crypto with another layout makes these algorithms unsupported instead of wrong.
package enum DigestValue {
    /// The hash of `message`; nil for SHA-224, which swift-crypto does not offer.
    package static func hash(_ name: HashName, _ message: [UInt8]) -> [UInt8]? {
        switch name {
        case .sha1: return Array(Insecure.SHA1.hash(data: message))
        case .sha224: return nil
        case .sha256: return Array(SHA256.hash(data: message))
        case .sha384: return Array(SHA384.hash(data: message))
        case .sha512: return Array(SHA512.hash(data: message))
        }
    }

    /// Calls `body` with `bytes` as a digest value of the hash function `name` names.
    package static func withDigest<R>(_ name: HashName, _ bytes: [UInt8],
                                      _ body: (any Digest) throws(KeyError) -> R) throws(KeyError) -> R {
        guard bytes.count == name.byteCount else {
            throw .param("the digest is \(bytes.count) bytes; \(name.rawValue) digests are \(name.byteCount)")
        }
        switch name {
        case .sha1: return try body(try digest(Insecure.SHA1.self, bytes: bytes))
        case .sha224: throw KeyError(.unsupportedAlgorithm, "SHA-224 is not supported")
        case .sha256: return try body(try digest(SHA256.self, bytes: bytes))
        case .sha384: return try body(try digest(SHA384.self, bytes: bytes))
        case .sha512: return try body(try digest(SHA512.self, bytes: bytes))
        }
    }

    static func digest<H: HashFunction>(_ hash: H.Type, bytes: [UInt8]) throws(KeyError) -> H.Digest {
        guard isLayoutUnderstood(hash), bytes.count == H.Digest.byteCount else {
            throw KeyError(.unsupportedAlgorithm, "digests cannot be supplied for this hash function")
        }
        return load(H.Digest.self, from: bytes)
    }

    /// Whether `H.Digest` stores exactly its bytes, in order, and nothing else.
    static func isLayoutUnderstood<H: HashFunction>(_ hash: H.Type) -> Bool {
        guard MemoryLayout<H.Digest>.size >= H.Digest.byteCount, MemoryLayout<H.Digest>.size <= H.Digest.byteCount + 8 else {
            return false
        }
        let probe = H.hash(data: Array("keyhaven digest layout probe".utf8))
        let copy = load(H.Digest.self, from: Array(probe))
        return copy == probe && Array(copy) == Array(probe)
    }

    private static func load<D: Digest>(_ type: D.Type, from bytes: [UInt8]) -> D {
        withUnsafeTemporaryAllocation(byteCount: MemoryLayout<D>.size, alignment: MemoryLayout<D>.alignment) { buffer in
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            buffer.copyBytes(from: bytes)
            return buffer.load(as: D.self)
        }
    }
}

extension DigestValue {
    /// Whether digests of `name` can be supplied for RSA signatures on this build.
    package static func isSupported(_ name: HashName) -> Bool {
        switch name {
        case .sha1: return isLayoutUnderstood(Insecure.SHA1.self)
        case .sha224: return false
        case .sha256: return isLayoutUnderstood(SHA256.self)
        case .sha384: return isLayoutUnderstood(SHA384.self)
        case .sha512: return isLayoutUnderstood(SHA512.self)
        }
    }
}
