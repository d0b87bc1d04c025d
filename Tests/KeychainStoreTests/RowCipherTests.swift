import Foundation
import Testing
@testable import KeychainStore

@Suite struct RowCipherTests {
    let keys = ClassKeys(classKey: KeychainCrypto.randomKey())
    let cipher = RowCipher(table: "genp", persistentID: Data(repeating: 1, count: 16), keyClass: .whenUnlocked)
    let metadata = ItemMetadata(attributes: ["acct": .string("alice")], secretTag: Data(repeating: 2, count: 16),
                                hasSecret: true, accessControlFlags: nil)

    @Test("Blobs open with the same row, class and key, and hide the plaintext")
    func roundTrip() throws {
        let sealed = try cipher.sealMetadata(metadata, keys: keys)
        #expect(try cipher.openMetadata(sealed, keys: keys) == metadata)
        #expect(sealed.range(of: Data("alice".utf8)) == nil)
        let secret = try cipher.sealSecret(Data("hunter2".utf8), tag: metadata.secretTag, keys: keys)
        #expect(try cipher.openSecret(secret, tag: metadata.secretTag, keys: keys) == Data("hunter2".utf8))
        #expect(secret.range(of: Data("hunter2".utf8)) == nil)
    }

    @Test("A secret blob opens from a slice of a larger buffer; every truncation is .decode")
    func secretBlobSlicesAndTruncations() throws {
        let secret = try cipher.sealSecret(Data("hunter2".utf8), tag: metadata.secretTag, keys: keys)
        let inside = (Data([0xAA, 0xBB]) + secret + Data([0xCC]))
        let slice = inside[(inside.startIndex + 2)..<(inside.endIndex - 1)]
        #expect(slice.startIndex != 0)
        #expect(try cipher.openSecret(slice, tag: metadata.secretTag, keys: keys) == Data("hunter2".utf8))
        for length in 0..<secret.count {
            #expect(throws: StoreError.self) { try cipher.openSecret(secret.prefix(length), tag: metadata.secretTag, keys: keys) }
            #expect(throws: StoreError.self) { try cipher.openSecret(inside[(inside.startIndex + 2)..<(inside.startIndex + 2 + length)], tag: metadata.secretTag, keys: keys) }
        }
    }

    @Test("Every flipped bit of a sealed blob is .decode")
    func flippedBits() throws {
        let sealed = try cipher.sealMetadata(metadata, keys: keys)
        for index in sealed.indices {
            var damaged = sealed
            damaged[index] ^= 0x10
            #expect(throws: StoreError.self) { try cipher.openMetadata(damaged, keys: keys) }
        }
        let secret = try cipher.sealSecret(Data("hunter2".utf8), tag: metadata.secretTag, keys: keys)
        for index in secret.indices {
            var damaged = secret
            damaged[index] ^= 0x01
            #expect(throws: StoreError.self) { try cipher.openSecret(damaged, tag: metadata.secretTag, keys: keys) }
        }
    }

    @Test("A blob opened as another row, class, table, tag or key is .decode")
    func wrongContext() throws {
        let sealed = try cipher.sealMetadata(metadata, keys: keys)
        let others = [
            RowCipher(table: "genp", persistentID: Data(repeating: 9, count: 16), keyClass: .whenUnlocked),
            RowCipher(table: "genp", persistentID: Data(repeating: 1, count: 16), keyClass: .always),
            RowCipher(table: "inet", persistentID: Data(repeating: 1, count: 16), keyClass: .whenUnlocked),
        ]
        for other in others {
            #expect(throws: StoreError.self) { try other.openMetadata(sealed, keys: keys) }
        }
        #expect(throws: StoreError.self) { try cipher.openMetadata(sealed, keys: ClassKeys(classKey: KeychainCrypto.randomKey())) }
        let secret = try cipher.sealSecret(Data("x".utf8), tag: metadata.secretTag, keys: keys)
        #expect(throws: StoreError.self) { try cipher.openSecret(secret, tag: Data(count: 16), keys: keys) }
    }

    @Test("Two seals of the same secret differ (fresh nonce and item key)")
    func freshness() throws {
        let a = try cipher.sealSecret(Data("same".utf8), tag: metadata.secretTag, keys: keys)
        let b = try cipher.sealSecret(Data("same".utf8), tag: metadata.secretTag, keys: keys)
        #expect(a != b)
    }

    @Test("Descriptions never contain values or secrets")
    func descriptions() {
        let item = StoredItem(itemClass: .genericPassword, rowID: 1, persistentReference: .uuid(.genericPassword, Data(count: 16)),
                              isTombstone: false, attributes: ["acct": .string("alice-account")], accessControlFlags: nil,
                              secret: Data("hunter2".utf8))
        #expect(!item.description.contains("alice-account"))
        #expect(!item.description.contains("hunter2"))
        #expect(item.description.contains("acct"))
        let keys = UnlockedKeys(["index": KeychainCrypto.randomKey(), "dk": KeychainCrypto.randomKey()], hasPassword: false)
        #expect(keys.description == "UnlockedKeys(classes: [\"dk\"])")
    }
}
