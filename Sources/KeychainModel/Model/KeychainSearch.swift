/// Operations over several keychains in order (a search list), shared by the library, the agent
/// and the command so they combine results the same way.
package enum KeychainSearch {
    /// Items from each keychain in turn, up to the query's limit, each with the keychain it came
    /// from. A keychain that cannot answer (locked, damaged) is passed over when others have
    /// matches; with none, its error is the answer, else `.itemNotFound`.
    /// `withAttributes` as ``KeychainBackend/find(_:caller:withSecrets:withAttributes:)`` says.
    package static func find(_ query: ItemQuery, in keychains: [any KeychainBackend], caller: Caller,
                             withSecrets: Bool, withAttributes: Bool = true) throws(StoreError) -> [(keychain: any KeychainBackend, item: StoredItem)] {
        var query = query
        var found: [(keychain: any KeychainBackend, item: StoredItem)] = []
        var firstError: StoreError?
        for keychain in keychains {
            do throws(StoreError) {
                found += try keychain.find(query, caller: caller, withSecrets: withSecrets, withAttributes: withAttributes).map { (keychain, $0) }
            } catch where error.code == .itemNotFound {
                continue
            } catch {
                firstError = firstError ?? error
                continue
            }
            if let limit = query.limit {
                guard found.count < limit else { break }
                query.limit = limit - found.count
            }
        }
        if found.isEmpty { throw firstError ?? StoreError(.itemNotFound, "no item matched") }
        return found
    }

    /// Runs a write on every keychain and adds up what it changed; nothing anywhere is
    /// `.itemNotFound`. Each keychain's part is all or nothing; the first other failure stops it.
    package static func write(in keychains: [any KeychainBackend],
                              _ body: (any KeychainBackend) throws(StoreError) -> Int) throws(StoreError) -> Int {
        var total = 0
        for keychain in keychains {
            do throws(StoreError) { total += try body(keychain) } catch where error.code == .itemNotFound { continue }
        }
        guard total > 0 else { throw StoreError(.itemNotFound, "no item matched") }
        return total
    }
}
