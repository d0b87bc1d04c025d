import Foundation

/// SAMKeychain's class functions: one call per operation on a service and account.
extension Keychain {
    /// Stores a password for a service and account.
    public static func setPassword(_ password: String, forService service: String, account: String) throws(KeychainError) {
        try setPasswordData(Data(password.utf8), forService: service, account: account)
    }

    /// The password for a service and account, or nil.
    public static func password(forService service: String, account: String) throws(KeychainError) -> String? {
        try passwordData(forService: service, account: account).flatMap { String(data: $0, encoding: .utf8) }
    }

    /// Stores password data for a service and account.
    public static func setPasswordData(_ password: Data, forService service: String, account: String) throws(KeychainError) {
        var query = KeychainQuery(service: service, account: account)
        query.passwordData = password
        try query.save()
    }

    /// The password data for a service and account, or nil.
    public static func passwordData(forService service: String, account: String) throws(KeychainError) -> Data? {
        var query = KeychainQuery(service: service, account: account)
        do {
            try query.fetch()
        } catch KeychainError.itemNotFound {
            return nil
        }
        return query.passwordData
    }

    /// Deletes the password for a service and account; `.itemNotFound` if there is none.
    public static func deletePassword(forService service: String, account: String) throws(KeychainError) {
        try KeychainQuery(service: service, account: account).delete()
    }

    /// Every generic password this process can see.
    public static func allAccounts() throws(KeychainError) -> [KeychainItem] {
        try KeychainQuery().fetchAll()
    }

    /// Every generic password of a service.
    public static func accounts(forService service: String) throws(KeychainError) -> [KeychainItem] {
        try KeychainQuery(service: service).fetchAll()
    }
}
