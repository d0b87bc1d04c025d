// Implementation-only: a target that sees Keyhaven's modules without depending on them has no map
// of its C modules (docs/architecture.md); no type here stores a C type.
@_implementationOnly import COpenSSL
import FoundationEssentials

/// scrypt (RFC 7914) from the system's OpenSSL (`EVP_PBE_scrypt`).
///
/// OpenSSL rather than swift-crypto's: the same function and the same keys, but the system's
/// library is built optimized whatever the build, where swift-crypto's BoringSSL is compiled with
/// Keyhaven (unoptimized in a debug build: ten times slower, seconds a derivation, which every
/// test that sets a keychain password paid).
enum Scrypt {
    /// The `count`-byte key for `password` (the caller zeroes it); nil if OpenSSL refuses the
    /// parameters or runs out of memory.
    static func derive(password: [UInt8], salt: Data, logN: UInt8, r: UInt32, p: UInt32, count: Int) -> [UInt8]? {
        guard logN < 64, count > 0 else { return nil }
        let n = UInt64(1) << UInt64(logN)
        // V (128 r N bytes) and B (128 r p bytes), and room for OpenSSL's own use.
        let (v, vOverflow) = (128 * UInt64(r)).multipliedReportingOverflow(by: n)
        let (b, bOverflow) = (128 * UInt64(r)).multipliedReportingOverflow(by: UInt64(p))
        let (maximumMemory, sumOverflow) = v.addingReportingOverflow(b + (1 << 20))
        guard !vOverflow, !bOverflow, !sumOverflow else { return nil }
        var key = [UInt8](repeating: 0, count: count)
        // An empty password still needs an address: OpenSSL reads a NULL one as "check only".
        let passwordBytes = password.isEmpty ? [0] : password
        let status = passwordBytes.withUnsafeBufferPointer { passwordBuffer in
            Array(salt).withUnsafeBufferPointer { saltBuffer in
                key.withUnsafeMutableBufferPointer { keyBuffer in
                    passwordBuffer.withMemoryRebound(to: CChar.self) { passwordChars in
                        EVP_PBE_scrypt(passwordChars.baseAddress, password.count, saltBuffer.baseAddress, saltBuffer.count,
                                       n, UInt64(r), UInt64(p), maximumMemory, keyBuffer.baseAddress, keyBuffer.count)
                    }
                }
            }
        }
        guard status == 1 else { return nil }
        return key
    }
}
