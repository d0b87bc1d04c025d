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

    /// Finds across keychains, in order, up to the query's limit. A keychain that cannot answer
    /// (locked, damaged) is passed over when others have matches; with none, its error is the
    /// answer.
    static func find(_ dictionary: ItemDictionary, caller: Caller) throws(SecStatusError) -> [StoredItem] {
        var query = dictionary.query
        var items: [StoredItem] = []
        var firstError: SecStatusError?
        for database in try forSearch(dictionary) {
            do throws(StoreError) {
                items += try database.find(query, caller: caller, withSecrets: dictionary.returns.data)
            } catch where error.code == .itemNotFound {
                continue
            } catch {
                firstError = firstError ?? SecStatusError(error)
                continue
            }
            if let limit = query.limit {
                guard items.count < limit else { break }
                query.limit = limit - items.count
            }
        }
        if items.isEmpty { throw firstError ?? SecStatusError(errSecItemNotFound, "no item matched") }
        return items
    }

    /// Runs a write on every keychain searched; not found in all of them is `errSecItemNotFound`.
    /// Each keychain's part is all or nothing; across keychains the first failure stops the call.
    static func write(_ dictionary: ItemDictionary, _ body: (any KeychainBackend) throws(StoreError) -> Int) throws(SecStatusError) {
        var total = 0
        for database in try forSearch(dictionary) {
            do throws(StoreError) {
                total += try body(database)
            } catch where error.code == .itemNotFound {
                continue
            } catch {
                throw SecStatusError(error)
            }
        }
        if total == 0 { throw SecStatusError(errSecItemNotFound, "no item matched") }
    }
}
