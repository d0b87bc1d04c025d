/// The names the freedesktop Secret Service specification (version 0.2) gives: the bus name the
/// provider owns, its root object and its interfaces. Shared by the provider and its clients.
package enum SecretServiceNames {
    package static let busName = "org.freedesktop.secrets"
    package static let root = "/org/freedesktop/secrets"
    package static let serviceInterface = "org.freedesktop.Secret.Service"
    package static let collectionInterface = "org.freedesktop.Secret.Collection"
    package static let itemInterface = "org.freedesktop.Secret.Item"
}
