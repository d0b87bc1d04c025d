import Foundation
import KeychainStore
import Synchronization

/// How the file-keychain functions find keychains: references to paths, the default keychain
/// and the search list of the current keychain home.
package enum FileKeychains {
    static func home() throws(SecStatusError) -> KeychainHome {
        try engine { () throws(StoreError) in try KeychainHome.current() }
    }

    /// A keychain argument as a path: with a slash, a path (made absolute); without, a name in the
    /// keychain home, given the `.keychain-db` ending if it has no ending of its own.
    static func path(for name: String, in home: KeychainHome) -> String {
        home.keychainPath(for: name, relativeTo: FileManager.default.currentDirectoryPath)
    }

    /// The open keychain a reference names; nil names the default keychain.
    package static func database(_ keychain: SecKeychain?) throws(SecStatusError) -> any KeychainBackend {
        guard let keychain else {
            return try engine { () throws(StoreError) in try Backends.defaultKeychain() }
        }
        let home = try home()
        return try engine { () throws(StoreError) in
            try Backends.keychain(at: keychain.path, home: home, create: keychain.path == home.defaultKeychainPath)
        }
    }

    /// The keychains a `keychainOrArray` argument names: nil for the search list, a keychain, or
    /// an array of keychains.
    static func databases(_ keychainOrArray: CFTypeRef?) throws(SecStatusError) -> [any KeychainBackend] {
        switch keychainOrArray {
        case nil:
            return try engine { () throws(StoreError) in try Backends.searchList() }
        case let keychain as SecKeychain:
            return [try database(keychain)]
        case let array as NSArray:
            var result: [any KeychainBackend] = []
            for element in array {
                guard let keychain = element as? SecKeychain else { throw .param("the keychain list holds something that is not a keychain") }
                result.append(try database(keychain))
            }
            return result
        default:
            throw .param("not a keychain or an array of keychains")
        }
    }

    static func preferences() throws(SecStatusError) -> (KeychainHome, KeychainPreferences) {
        let home = try home()
        return (home, try engine { () throws(StoreError) in try KeychainPreferences.load(home) })
    }

    static func save(_ preferences: KeychainPreferences, _ home: KeychainHome) throws(SecStatusError) {
        try engine { () throws(StoreError) in try preferences.save(home) }
    }

}

/// Copies `length` bytes from a C buffer (nothing for a null pointer).
package func bytes(_ pointer: UnsafeRawPointer?, _ length: UInt32) -> [UInt8] {
    guard let pointer, length > 0 else { return [] }
    return Array(UnsafeRawBufferPointer(start: pointer, count: Int(length)))
}
