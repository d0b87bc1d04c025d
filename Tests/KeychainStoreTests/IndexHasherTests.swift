import Crypto
import Foundation
import Testing
@testable import KeychainStore

/// The search columns' keyed hash: the file format fixes it, and remembering results must not
/// change it.
struct IndexHasherTests {
    @Test("IndexHasher gives the first 16 bytes of HMAC-SHA256 under the key, the first time and when remembered")
    func matchesHMAC() {
        let key = SymmetricKey(size: .bits256)
        let hasher = IndexHasher(key: key)
        for input in [[], Array("genp\u{0}acct\u{0}balice".utf8), [UInt8](repeating: 7, count: 300)] as [[UInt8]] {
            let expected = Data(HMAC<SHA256>.authenticationCode(for: input, using: key).prefix(16))
            #expect(hasher.hash(input) == expected)
            #expect(hasher.hash(input) == expected)
        }
        #expect(IndexHasher(key: SymmetricKey(size: .bits256)).hash([1]) != hasher.hash([1]))
        for i in 0..<10_000 { _ = hasher.hash(Array("value \(i)".utf8)) }  // past its memory: dropped and refilled
        #expect(hasher.hash([1, 2]) == Data(HMAC<SHA256>.authenticationCode(for: [1, 2] as [UInt8], using: key).prefix(16)))
    }
}
