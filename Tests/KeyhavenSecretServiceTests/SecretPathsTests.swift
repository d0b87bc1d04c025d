import KeychainModel
import Testing
@testable import KeyhavenSecretService

/// The object paths of collections: a keychain's name as one element, and the `session`
/// element kept for the in-memory collection (docs/secret-service.md, "The session collection").
struct SecretPathsTests {
    let home = KeychainHome(path: "/home/ann/.keyhaven")

    @Test("A keychain file named session is _73ession; the element session is the in-memory collection, its alias and items too")
    func sessionElement() {
        let file = home.path + "/session.keychain-db"
        #expect(SecretObject.collectionPath(for: file) == SecretObject.collectionPrefix + "_73ession")
        #expect(SecretObject.decode("_73ession") == "session")
        #expect(SecretObject.collectionPath(for: home.sessionKeychainPath) == "/org/freedesktop/secrets/collection/session")
        let defaultKeychain = home.defaultKeychainPath
        #expect(SecretObject.resolve("/org/freedesktop/secrets/collection/session", home: home, defaultKeychain: defaultKeychain)
                == .collection(keychain: home.sessionKeychainPath, path: "/org/freedesktop/secrets/collection/session"))
        #expect(SecretObject.resolve("/org/freedesktop/secrets/aliases/session", home: home, defaultKeychain: defaultKeychain)
                == .collection(keychain: home.sessionKeychainPath, path: "/org/freedesktop/secrets/aliases/session"))
        let item = "/org/freedesktop/secrets/collection/session/" + String(repeating: "ab", count: 16)
        guard case .item(let keychain, let collection, _, _)? = SecretObject.resolve(item, home: home, defaultKeychain: defaultKeychain) else {
            Issue.record("no item at \(item)")
            return
        }
        #expect(keychain == home.sessionKeychainPath && collection == "/org/freedesktop/secrets/collection/session")
        #expect(SecretObject.resolve("/org/freedesktop/secrets/collection/sessions", home: home, defaultKeychain: defaultKeychain) == nil)
        #expect(SecretObject.encode("sessions") == "sessions" && SecretObject.encode("login") == "login")
    }
}
