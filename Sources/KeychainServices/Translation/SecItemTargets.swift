import Foundation
import KeychainStore

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
    static func find(_ dictionary: ItemDictionary, caller: Caller) throws(SecStatusError) -> [StoredItem] {
        let keychains = try forSearch(dictionary)
        return try engine { () throws(StoreError) in
            try KeychainSearch.find(dictionary.query, in: keychains, caller: caller, withSecrets: dictionary.needsSecrets).map(\.item)
        }
    }

    /// Runs a write on every keychain searched (``KeychainSearch``).
    static func write(_ dictionary: ItemDictionary, _ body: (any KeychainBackend) throws(StoreError) -> Int) throws(SecStatusError) {
        let keychains = try forSearch(dictionary)
        _ = try engine { () throws(StoreError) in try KeychainSearch.write(in: keychains, body) }
    }
}
