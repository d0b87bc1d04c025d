import Foundation
import KeychainKeys

/// The `imports` target: bytes as `SecItemImport` reads them (PEM, DER keys and certificates,
/// encrypted keys, PKCS#12), with no passphrase, with the seeds' passphrase, and under each
/// stated format; whatever is read is written back in every format that needs no passphrase (the
/// encrypting formats take their own keys, not the input's, and 100,000 PBKDF2 rounds an
/// execution would slow the search). Every path returns.
enum ImportFuzzer {
    static let passphrase = Array("fuzz".utf8)

    static func run(_ bytes: [UInt8]) {
        var read: [ExternalItem] = []
        for format in ExternalFormat.allCases {
            for key in [nil, passphrase] {
                if let decoded = try? ExternalItemDecoder.decode(bytes, format: format, passphrase: key), read.isEmpty {
                    read = decoded.items
                }
            }
        }
        guard !read.isEmpty else { return }
        for format in [ExternalFormat.unknown, .openSSL, .bsafe, .x509Cert, .pemSequence, .wrappedPKCS8] {
            _ = try? ExternalItemEncoder.encode(read, format: format, pemArmour: true, passphrase: nil)
        }
    }
}
