import KeychainModel

/// How a Secret Service item is a keychain item, for the provider and for an importer alike
/// (docs/secret-service.md, "Items").
package enum SecretItemMapping {
    /// The keychain attributes of an item made or changed through D-Bus: `svce` is the
    /// `service` attribute, or (without one) all attributes but the account, written out, so
    /// that items with different attributes never share Apple's primary key; `acct` the account.
    package static func keychainAttributes(_ lookup: SecretServiceAttributes, label: String?) -> [String: AttributeValue] {
        var attributes: [String: AttributeValue] = [:]
        let accountKey = SecretServiceAttributes.accountKeys.first { lookup.attributes[$0] != nil }
        let account = accountKey.flatMap { lookup.attributes[$0] } ?? ""
        let service = lookup.attributes[SecretServiceAttributes.serviceKey] ?? lookup.attributes
            .filter { $0.key != accountKey }
            .sorted { $0.key < $1.key }
            .map { "\($0.key)=\($0.value)" }
            .joined(separator: " ")
        attributes[.service] = .string(service)
        attributes[.account] = .string(account)
        attributes[SecretServiceAttributes.attributeName] = lookup.attributeValue
        if let label { attributes[.label] = .string(label) }
        return attributes
    }
}
