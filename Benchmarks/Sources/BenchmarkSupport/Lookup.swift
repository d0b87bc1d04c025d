import Foundation
import KeychainServices

/// The measured operations, shared by the benchmarks and `bench-instructions`.
public enum Lookup {
    /// `SecItemCopyMatching` of one item by service and account, returning its data, as a
    /// program calls it: the query built as a Swift dictionary and bridged.
    public static func copyMatching(_ account: String) -> CFTypeRef? {
        var query = Fixture.query(account)
        query[kSecReturnData as String] = true
        var result: CFTypeRef?
        precondition(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
        return result
    }
}
