import Crypto

/// Digest bytes a caller supplied, for ECDSA. swift-crypto's ECDSA reads only the bytes of the
/// digest it is given (`withUnsafeBytes`), so any length Apple's `digest-X962` accepts works; the
/// static `byteCount` is never read on that path.
struct ProvidedDigest: Digest {
    static var byteCount: Int { 64 }
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }

    func makeIterator() -> IndexingIterator<[UInt8]> { bytes.makeIterator() }

    var description: String { "a digest of \(bytes.count) bytes" }
}
