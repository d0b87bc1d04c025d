import FoundationEssentials
import KeychainKeys
import KeychainStore
import KeyhavenAgentClient

/// The item requests: each acts as the caller the access checks allow (AgentService+Access.swift),
/// and asks about the items the program is not trusted with.
extension AgentService {
    func add(_ item: NewItem, to keychain: String, caller: Caller, _ context: RequestContext) throws(StoreError) -> AgentAnswer {
        let caller = try authorizedCaller(caller, context)
        var item = item
        try refuseReservedGroup(item.attributes, context)
        item.access = try resolved(item.access, context)
        try captureBiometrySet(&item, context)
        return .item(try database(keychain).add(item, caller: caller))
    }

    func find(_ query: ItemQuery, in keychains: [String], caller: Caller, withSecrets: Bool, withAttributes: Bool,
              _ context: RequestContext) throws(StoreError) -> AgentAnswer {
        let caller = try authorizedCaller(caller, context)
        var found = try KeychainSearch.find(query, in: try databases(keychains), caller: caller, withSecrets: withSecrets)
        if withSecrets { found = try checkSecrets(found, caller: caller, context) }
        // A private key that is not extractable never leaves the agent, whatever is asked; a
        // password whose secret alone is asked for leaves without its attributes and access.
        return .items(found.map { found in
            var item = found.item
            if !StoredKeyOperation.isExtractable(item) { item.secret = nil }
            if !withAttributes && item.itemClass.isPassword { item.attributes = [:]; item.access = nil }
            return item
        })
    }

    func update(_ query: ItemQuery, in keychains: [String], with changes: ItemChanges, caller: Caller,
                _ context: RequestContext) throws(StoreError) -> AgentAnswer {
        let caller = try authorizedCaller(caller, context)
        var changes = changes
        try refuseReservedGroup(changes.attributes, context)
        if changes.access != nil { changes.access = try resolved(changes.access, context) }
        return .count(try KeychainSearch.write(in: try databases(keychains)) { (db) throws(StoreError) in
            guard let db = db as? KeychainDatabase else { throw StoreError(.internalError, "not a keychain of the agent's") }
            return try db.update(query, with: changes, caller: caller, authorize: writeAuthorization(for: db.path, context))
        })
    }

    func delete(_ query: ItemQuery, in keychains: [String], caller: Caller, makeTombstones: Bool,
                _ context: RequestContext) throws(StoreError) -> AgentAnswer {
        let caller = try authorizedCaller(caller, context)
        return .count(try KeychainSearch.write(in: try databases(keychains)) { (db) throws(StoreError) in
            guard let db = db as? KeychainDatabase else { throw StoreError(.internalError, "not a keychain of the agent's") }
            return try db.delete(query, caller: caller, makeTombstones: makeTombstones, authorize: writeAuthorization(for: db.path, context))
        })
    }

    /// An operation with a stored key, found by its reference in the first keychain that has it
    /// (in the TPM for a Secure Enclave key); the key's secret never leaves the agent.
    func keyOperation(_ operation: KeyOperationRequest, in keychains: [String], caller: Caller,
                      _ context: RequestContext) throws(StoreError) -> AgentAnswer {
        var query = ItemQuery(itemClass: operation.reference.itemClass)
        query.persistentReference = operation.reference
        query.limit = 1
        let caller = try authorizedCaller(caller, context)
        guard let found = try KeychainSearch.find(query, in: try databases(keychains), caller: caller, withSecrets: true).first else {
            throw StoreError(.itemNotFound, "no key with that reference")
        }
        _ = try checkSecrets([found], caller: caller, context)
        if let enclaveKey = try Self.enclaveKey(found.item) { return .bytes(try performEnclave(operation, key: enclaveKey)) }
        return .bytes(try StoredKeyOperation.perform(operation, on: found.item))
    }
}
