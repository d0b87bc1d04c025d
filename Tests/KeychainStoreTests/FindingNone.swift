import KeychainModel
@testable import KeychainStore

extension KeychainDatabase {
    /// The items `query` matches; none, rather than `.itemNotFound`, when nothing does.
    func findingNone(_ query: ItemQuery, caller: Caller) throws -> [StoredItem] {
        do throws(StoreError) {
            return try find(query, caller: caller, withSecrets: false)
        } catch {
            guard error.code == .itemNotFound else { throw error }
            return []
        }
    }
}
