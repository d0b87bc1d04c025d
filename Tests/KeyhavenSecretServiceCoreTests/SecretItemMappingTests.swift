import FoundationEssentials
import KeychainModel
import KeyhavenSecretServiceCore
import Testing

/// How a Secret Service item is a keychain item (docs/secret-service.md, "Items").
@Suite("Secret Service items as keychain items")
struct SecretItemMappingTests {
    @Test("The `service` attribute is the service and the first account key present is the account")
    func serviceAndAccount() throws {
        let lookup = SecretServiceAttributes(attributes: ["service": "mail", "username": "ada", "user": "other", "xdg:schema": "org.example"])
        let attributes = SecretItemMapping.keychainAttributes(lookup, label: "Mail for Ada")
        #expect(attributes["svce"] == .string("mail"))
        #expect(attributes["acct"] == .string("ada"))
        #expect(attributes["labl"] == .string("Mail for Ada"))
        #expect(SecretServiceAttributes(item: attributes) == lookup)
    }

    @Test("Without a `service` attribute the service is every other attribute written out in order, so different attributes never share Apple's primary key")
    func serviceWrittenOut() throws {
        let first = SecretItemMapping.keychainAttributes(SecretServiceAttributes(attributes: ["b": "2", "a": "1", "account": "ada"]), label: nil)
        #expect(first["svce"] == .string("a=1 b=2"))
        #expect(first["acct"] == .string("ada"))
        #expect(first["labl"] == nil)
        let second = SecretItemMapping.keychainAttributes(SecretServiceAttributes(attributes: ["b": "3", "a": "1", "account": "ada"]), label: nil)
        #expect(first["svce"] != second["svce"])
    }

    @Test("An item without account attributes has an empty account")
    func noAccount() {
        let attributes = SecretItemMapping.keychainAttributes(SecretServiceAttributes(attributes: ["service": "s"]), label: "l")
        #expect(attributes["acct"] == .string(""))
    }
}
