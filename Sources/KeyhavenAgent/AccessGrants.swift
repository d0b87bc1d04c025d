import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenAgentClient

/// The access groups granted to applications (Always Allow on a group's prompt, or
/// `keyhaven access grant -T PATH -G GROUP`), kept in the default keychain itself, encrypted:
/// one generic password per application in the reserved group ``group``, AfterFirstUnlock
/// ThisDeviceOnly (never synced: digests are this machine's), trusted by no application.
package struct AccessGrants: Sendable {
    /// The grants' own group; no client is ever given it.
    static let group = AgentGroups.grants
    static let service = "keyhaven.access-grant"
    /// Groups no client may be granted, and no Secret Service client sees.
    package static let reserved = AgentGroups.all
    private static let caller = Caller(accessGroups: [group])

    let database: KeychainDatabase

    /// Every grant; none when the keychain cannot be read now (locked before its first unlock).
    func all() -> [ApplicationGrant] {
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = .named([.service: .string(Self.service), .accessGroup: .string(Self.group)])
        query.limit = nil
        guard let items = try? database.find(query, caller: Self.caller, withSecrets: true) else { return [] }
        return items.compactMap { item in
            guard var bytes = item.secret.map(Array.init) else { return nil }
            defer { zeroize(&bytes) }
            var reader = ByteReader(bytes)
            guard let application = try? TrustedApplication(from: &reader), let groups = try? [String](from: &reader) else { return nil }
            return ApplicationGrant(application: application, groups: groups)
        }
    }

    /// The groups granted to `application`.
    func groups(for application: ApplicationIdentity) -> Set<String> {
        guard !application.isTampered else { return [] }
        return Set(all().filter { $0.application.matches(application) }.flatMap(\.groups))
    }

    /// Adds `groups` to what `application` is granted.
    func grant(_ groups: [String], to application: TrustedApplication) throws(StoreError) {
        let current = all().first { $0.application.digest == application.digest }?.groups ?? []
        try save(ApplicationGrant(application: application, groups: current + groups.filter { !current.contains($0) }))
    }

    /// Takes `groups` back from `application`; `.itemNotFound` when it had none of them.
    func revoke(_ groups: [String], from application: TrustedApplication) throws(StoreError) {
        guard let current = all().first(where: { $0.application.digest == application.digest }),
              current.groups.contains(where: groups.contains) else {
            throw StoreError(.itemNotFound, "that application was granted none of those groups")
        }
        try save(ApplicationGrant(application: application, groups: current.groups.filter { !groups.contains($0) }))
    }

    private func save(_ grant: ApplicationGrant) throws(StoreError) {
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = .named([.service: .string(Self.service), .account: .string(grant.application.digest.hexString), .accessGroup: .string(Self.group)])
        var writer = ByteWriter()
        grant.application.write(to: &writer)
        grant.groups.write(to: &writer)
        let secret = Data(writer.bytes)
        if grant.groups.isEmpty {
            _ = try database.delete(query, caller: Self.caller, makeTombstones: false)
            return
        }
        var changes = ItemChanges()
        changes.secret = secret
        changes.attributes[.label] = .string(grant.application.path)
        do {
            _ = try database.update(query, with: changes, caller: Self.caller)
        } catch where error.code == .itemNotFound {
            var attributes = query.criteria
            attributes[.accessible] = .string(KeyClass.afterFirstUnlockThisDeviceOnly.rawValue)
            attributes[.label] = .string(grant.application.path)
            _ = try database.add(NewItem(itemClass: .genericPassword, attributes: attributes, secret: secret, access: ItemAccess()),
                                 caller: Self.caller)
        }
    }
}
