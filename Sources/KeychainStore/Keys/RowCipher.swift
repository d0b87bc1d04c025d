import Crypto
import FoundationEssentials

/// Encrypts and decrypts the two blobs of an item row.
///
/// - `metadata` = AES-GCM(padded ``ItemMetadata``) under the class's metadata key;
/// - `secret` = `u8 version (1) || u8 wrappedKeyLength || AESKW(itemKey) || AES-GCM(padded secret)`,
///   with a fresh item key per write, wrapped under the class's secret-wrapping key.
///
/// The associated data of both names the blob's role, the table, the row's persistent identity
/// and its key class; the secret's also carries the metadata's `secretTag`. A blob moved to
/// another row, another class or another write of the same row fails to open (`.decode`).
struct RowCipher {
    let table: String
    let persistentID: Data
    let keyClass: KeyClass

    private func context(_ role: String, tag: Data = Data()) -> Data {
        var bytes = Data("keyhaven/v1/\(role)\u{0}\(table)\u{0}\(keyClass.rawValue)\u{0}".utf8)
        bytes.append(persistentID)
        bytes.append(tag)
        return bytes
    }

    func sealMetadata(_ metadata: ItemMetadata, keys: ClassKeys) throws(StoreError) -> Data {
        var plain = Padding.pad(metadata.encoded(), block: 64)
        defer { zeroize(&plain) }
        return try KeychainCrypto.seal(Data(plain), key: keys.metadata, context: context("metadata"))
    }

    func openMetadata(_ blob: Data, keys: ClassKeys) throws(StoreError) -> ItemMetadata {
        var plain = Array(try KeychainCrypto.open(blob, key: keys.metadata, context: context("metadata")))
        defer { zeroize(&plain) }
        return try ItemMetadata(decoding: try Padding.unpad(plain))
    }

    func sealSecret(_ secret: Data, tag: Data, keys: ClassKeys) throws(StoreError) -> Data {
        let itemKey = KeychainCrypto.randomKey()
        let wrapped = try KeychainCrypto.wrap(itemKey, under: keys.secretWrapping)
        var raw = Array(secret)
        var plain = Padding.pad(raw, block: 32)
        defer { zeroize(&raw); zeroize(&plain) }
        let sealed = try KeychainCrypto.seal(Data(plain), key: itemKey, context: context("secret", tag: tag))
        var blob = Data([1, UInt8(wrapped.count)])
        blob.append(wrapped)
        blob.append(sealed)
        return blob
    }

    func openSecret(_ blob: Data, tag: Data, keys: ClassKeys) throws(StoreError) -> Data {
        var reader = ByteReader(Array(blob))
        guard try reader.u8() == 1 else { throw StoreError(.decode, "unknown secret blob version") }
        let wrapped = Data(try reader.take(Int(try reader.u8())))
        let sealed = Data(try reader.take(reader.remaining))
        let itemKey = try KeychainCrypto.unwrap(wrapped, under: keys.secretWrapping)
        var plain = Array(try KeychainCrypto.open(sealed, key: itemKey, context: context("secret", tag: tag)))
        defer { zeroize(&plain) }
        return Data(try Padding.unpad(plain))
    }
}
