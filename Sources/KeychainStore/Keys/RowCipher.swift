import Crypto
import FoundationEssentials

/// Encrypts and decrypts the two blobs of an item row.
///
/// - `metadata` = AES-GCM(padded ``ItemMetadata``) under the class's metadata key;
/// - `secret` = `u8 version (1) || u8 wrappedKeyLength || AESKW(itemKey) || AES-GCM(padded secret)`,
///   with a fresh item key per write, wrapped under the class's secret-wrapping key.
///
/// The associated data of both names the blob's role, the table, the row's persistent identity
/// and its key class; the secret's also carries the metadata's `secretTag`, and (format 2) the
/// metadata's the row's tombstone flag. A blob moved to another row, another class or another
/// write of the same row, or a row whose `tomb` column was flipped, fails to open (`.decode`).
struct RowCipher {
    let table: String
    let persistentID: Data
    let keyClass: KeyClass
    /// Whether the row is a tombstone (authenticated from format 2 on).
    var tombstone = false
    /// The file's format: 1 binds no tombstone flag.
    var format = KeychainSchema.formatVersion

    /// `keyhaven/v1/<role> NUL <table> NUL <key class> NUL <persistent id> <tag>`; format 2's
    /// metadata: `keyhaven/v2/metadata NUL <table> NUL <key class> NUL <persistent id> <tomb>`.
    private func context(_ role: String, tag: Data? = nil) -> [UInt8] {
        let bindsTomb = format >= 2 && tag == nil
        let prefix = bindsTomb ? "keyhaven/v2/" : "keyhaven/v1/"
        var bytes: [UInt8] = []
        bytes.reserveCapacity(prefix.utf8.count + role.utf8.count + table.utf8.count + keyClass.rawValue.utf8.count + 3
                              + persistentID.count + (tag?.count ?? 0))
        bytes.append(contentsOf: prefix.utf8)
        bytes.append(contentsOf: role.utf8)
        bytes.append(0)
        bytes.append(contentsOf: table.utf8)
        bytes.append(0)
        bytes.append(contentsOf: keyClass.rawValue.utf8)
        bytes.append(0)
        bytes.append(contentsOf: persistentID)
        if let tag { bytes.append(contentsOf: tag) }
        if bindsTomb { bytes.append(tombstone ? 1 : 0) }
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
        do throws(CodecError) { return try ItemMetadata(decoding: try Padding.unpad(plain)) } catch { throw StoreError(error) }
    }

    func sealSecret(_ secret: Data, tag: Data, keys: ClassKeys) throws(StoreError) -> Data {
        let itemKey = KeychainCrypto.randomKey()
        let wrapped = try KeychainCrypto.wrap(itemKey, under: keys.secretWrapping)
        var raw = Array(secret)
        var plain = Padding.pad(raw, block: 32)
        defer { zeroize(&raw); zeroize(&plain) }
        let sealed = try KeychainCrypto.seal(Data(plain), key: itemKey, context: context("secret", tag: tag))
        return Self.join(wrapped, sealed)
    }

    func openSecret(_ blob: Data, tag: Data, keys: ClassKeys) throws(StoreError) -> Data {
        let (wrapped, sealed) = try Self.split(blob)
        let itemKey = try KeychainCrypto.unwrap(wrapped, under: keys.secretWrapping)
        var plain = Array(try KeychainCrypto.open(sealed, key: itemKey, context: context("secret", tag: tag)))
        defer { zeroize(&plain) }
        do throws(CodecError) { return Data(try Padding.unpad(plain)) } catch { throw StoreError(error) }
    }

    /// The secret blob with its item key wrapped under `new` instead of `old` (a re-key): the
    /// secret itself is never decrypted, and its ciphertext stays as it was.
    static func rewrapSecret(_ blob: Data, from old: ClassKeys, to new: ClassKeys) throws(StoreError) -> Data {
        let (wrapped, sealed) = try split(blob)
        let itemKey = try KeychainCrypto.unwrap(wrapped, under: old.secretWrapping)
        return join(try KeychainCrypto.wrap(itemKey, under: new.secretWrapping), sealed)
    }

    /// `u8 version (1) || u8 wrappedKeyLength || wrapped item key || sealed secret`.
    private static func join(_ wrapped: Data, _ sealed: Data) -> Data {
        var blob = Data([1, UInt8(wrapped.count)])
        blob.append(wrapped)
        blob.append(sealed)
        return blob
    }

    /// A secret blob's wrapped item key and sealed secret (slices of the blob, not copies).
    private static func split(_ blob: Data) throws(StoreError) -> (wrapped: Data, sealed: Data) {
        let start = blob.startIndex
        guard blob.count >= 2, blob[start] == 1 else {
            throw StoreError(.decode, blob.count < 2 ? "the data is truncated" : "unknown secret blob version")
        }
        let wrappedEnd = start + 2 + Int(blob[start + 1])
        guard wrappedEnd <= blob.endIndex else { throw StoreError(.decode, "the data is truncated") }
        return (blob[(start + 2)..<wrappedEnd], blob[wrappedEnd...])
    }
}
