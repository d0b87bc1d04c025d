import Foundation
import KeychainStore

/// The refusals that depend on the operation (`SecItemServer.c`'s `_SecItemAdd`, `_SecItemCopyMatching`, `_SecItemUpdate`, `_SecItemDelete`).
extension ItemDictionary {
    func check(for operation: SecItemOperation) throws(SecStatusError) {
        if authenticationUISkip && operation != .copyMatching {
            throw .param("kSecUseAuthenticationUISkip is only for SecItemCopyMatching")
        }
        switch operation {
        case .add:
            if case .rowID? = persistentReference { throw .param("a row-id persistent reference cannot be added") }
            if accessControl != nil && attributes[.accessible] != nil {
                throw .param("kSecAttrAccessible and kSecAttrAccessControl conflict")
            }
            if let control = accessControl, control.hasConstraints, attributes[.synchronizable] == .number(1) {
                throw .param("an item with an access-control constraint cannot be synchronizable")
            }
            if attributes[.sharingGroup] != nil && attributes[.synchronizable] == .number(1) {
                throw .param("a shared item cannot be synchronizable")
            }
        case .copyMatching:
            if useItemList { throw .param("kSecUseItemList is not supported") }
            if persistentReference != nil && attributes.keys.contains(where: { $0 != AttributeName.synchronizable.code }) {
                throw .param("a persistent reference and attributes cannot be searched together")
            }
        case .update, .delete:
            if operation == .update && returns.count > 0 { throw .param("SecItemUpdate takes no return keys") }
            // kSecMatchLimit is ignored, as macOS's shim strips it (KeychainAccess's removeAll()
            // passes kSecMatchLimitAll): every match is updated or deleted. Other match keys are
            // refused, as iOS refuses them all (docs/compatibility.md).
            if !matchKeys.subtracting([QueryKey.matchLimit]).isEmpty {
                throw .param("\(operation == .update ? "SecItemUpdate" : "SecItemDelete") takes no match keys")
            }
            if useItemList { throw .param("kSecUseItemList is not supported") }
            if case .rowID? = persistentReference, !attributes.isEmpty {
                throw .param("a row-id persistent reference and attributes cannot be combined")
            }
        }
    }

    /// The engine query this dictionary describes.
    var query: ItemQuery {
        var query = ItemQuery(itemClass: itemClass)
        query.criteria = attributes
        query.matchAnySynchronizable = matchAnySynchronizable
        query.tombstone = tombstone
        query.persistentReference = persistentReference
        query.limit = limit.maximum
        query.hostOrSubdomain = hostOrSubdomain
        if persistentReference != nil { query.criteria[.synchronizable] = nil }
        return query
    }
}
