import FoundationEssentials
import KeychainKeys
import KeychainModel
import KeyhavenCLI

/// Adds imported items to a keychain through the agent, as `import` does: a certificate already
/// there is kept, a private key already there is errSecDuplicateItem, and on any failure what
/// this import added is deleted again.
struct KeychainAddition {
    let session: Session
    let path: String
    /// Whether imported private keys may be exported again (`-x` makes them not).
    let extractable: Bool
    /// The programs the items trust (`-T`, `-A`); the keyhaven command's by default.
    var access: ItemAccess = .creatorOnly
    /// The access group they go into (`-G`); the command's default otherwise.
    var accessGroup: String?

    func add(_ items: [ExternalItem], counting count: inout ImportedCount) throws(StoreError) {
        var added: [NewItem] = []
        do throws(StoreError) {
            for item in items {
                switch item {
                case .certificate(let certificate):
                    if try add(certificateItem(certificate), into: &added) { count.certificates += 1 }
                case .key(let key):
                    _ = try add(keyItem(key), into: &added, duplicateIsError: true)
                    count.keys += 1
                case .identity(let identity):
                    _ = try add(certificateItem(identity.certificate), into: &added)
                    var key = keyItem(identity.privateKey)
                    if let label = identity.label { key.attributes[.label] = .string(label) }
                    _ = try add(key, into: &added, duplicateIsError: true)
                    count.identities += 1
                }
            }
        } catch {
            undo(added)
            throw error
        }
    }

    /// Adds `item`; true when added, false when a certificate was already there.
    private func add(_ item: NewItem, into added: inout [NewItem], duplicateIsError: Bool = false) throws(StoreError) -> Bool {
        var item = item
        item.access = access
        if let accessGroup { item.attributes[.accessGroup] = .string(accessGroup) }
        do throws(StoreError) {
            try session.send(.add(keychain: path, item: item, caller: session.caller))
        } catch where error.code == .duplicateItem && !duplicateIsError {
            return false
        }
        added.append(item)
        return true
    }

    private func undo(_ added: [NewItem]) {
        for item in added {
            var query = ItemQuery(itemClass: item.itemClass)
            query.criteria = item.attributes.filter { item.itemClass.schema[$0.key]?.isPrimaryKey == true }
            _ = try? session.send(.delete(keychains: [path], query: query, caller: session.caller, makeTombstones: false))
        }
    }

    private func certificateItem(_ certificate: CertificateInfo) -> NewItem {
        NewItem(itemClass: .certificate, attributes: ItemAttributes.certificate(certificate), secret: Data(certificate.der))
    }

    private func keyItem(_ key: AsymmetricKey) -> NewItem {
        let attributes = ItemAttributes.key(key.publicKey, isPrivate: key.isPrivate, isExtractable: extractable || !key.isPrivate)
        var material = key.withExternalRepresentation { $0 }
        defer { zeroize(&material) }
        return NewItem(itemClass: .key, attributes: attributes, secret: Data(material))
    }
}
