import Foundation

/// A random number generator reference. Only the default generator exists.
public typealias SecRandomRef = OpaquePointer

/// The default random number generator (the system's: `getrandom`).
nonisolated(unsafe) public let kSecRandomDefault: SecRandomRef? = nil

/// Fills `bytes` with `count` cryptographically secure random bytes.
///
/// Returns `errSecSuccess`, or `errSecParam` for a negative count.
@discardableResult
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 {
    guard count >= 0 else { return errSecParam }
    var generator = SystemRandomNumberGenerator()
    let buffer = UnsafeMutableRawBufferPointer(start: bytes, count: count)
    var offset = 0
    while offset < count {
        var word = generator.next()
        let n = min(8, count - offset)
        withUnsafeBytes(of: &word) { buffer.baseAddress!.advanced(by: offset).copyMemory(from: $0.baseAddress!, byteCount: n) }
        offset += n
    }
    return errSecSuccess
}
