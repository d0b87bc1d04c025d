import Foundation
import KeychainStore
import KeyhavenAgentClient

/// Which keychains a SecItem call works on, and how results from several combine.
///
/// Adds go to `kSecUseKeychain`, else the default keychain. Queries, updates and deletes go to
/// `kSecMatchSearchList`, else the search list (by default just the default keychain).
enum SecItemTargets {
    static func forAdd(_ dictionary: ItemDictionary) throws(SecStatusError) -> any KeychainBackend {
        try FileKeychains.database(dictionary.useKeychain)
    }

    static func forSearch(_ dictionary: ItemDictionary) throws(SecStatusError) -> [any KeychainBackend] {
        guard let list = dictionary.searchList else { return try FileKeychains.databases(nil) }
        return try FileKeychains.databases(NSArray(array: list))
    }

    /// Finds across keychains, in order, up to the query's limit (``KeychainSearch``).
    static func find(_ dictionary: ItemDictionary, caller: Caller) throws(SecStatusError) -> [(keychain: any KeychainBackend, item: StoredItem)] {
        let keychains = try forSearch(dictionary)
        // A key's ref is made from its data, except from the agent, which keeps private keys
        // (the ref then reaches the key through it).
        let agentHeld = keychains.contains { $0 is AgentKeychain }
        let withSecrets = dictionary.returns.data || (dictionary.needsSecrets && (!agentHeld || dictionary.itemClass == .certificate))
        // A password's data alone needs nothing else of the item (``ResultBuilder``): the agent
        // then leaves its attributes and access object off the wire.
        let withAttributes = !(dictionary.returns == ReturnFlags(data: true) && dictionary.itemClass.isPassword)
        return try engine { () throws(StoreError) in
            try KeychainSearch.find(dictionary.query, in: keychains, caller: caller, withSecrets: withSecrets, withAttributes: withAttributes)
        }
    }

    /// Runs a write on every keychain searched (``KeychainSearch``).
    static func write(_ dictionary: ItemDictionary, _ body: (any KeychainBackend) throws(StoreError) -> Int) throws(SecStatusError) {
        let keychains = try forSearch(dictionary)
        _ = try engine { () throws(StoreError) in try KeychainSearch.write(in: keychains, body) }
    }
}
