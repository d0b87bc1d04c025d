import FoundationEssentials
import KeychainModel
import KeychainStore

/// Keeps a device's ``DeviceState`` in its own default keychain: a generic password in an access
/// group of its own (`com.keyhaven.sync`, which no application is given), AfterFirstUnlock
/// ThisDeviceOnly, never synchronizable. Its keys are as safe as any item's: encrypted under the
/// keychain's class key, unreadable before the first unlock.
struct DeviceStateStore: Sendable {
    static let group = AgentGroups.sync
    static let caller = Caller(accessGroups: [group])

    let database: KeychainDatabase

    private var query: ItemQuery {
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = .named([.service: .string("com.keyhaven.sync"), .account: .string("device"), .accessGroup: .string(Self.group)])
        return query
    }

    /// The state, or nil when this home takes no part in sync.
    func load() throws(SyncEngineError) -> DeviceState? {
        do throws(StoreError) {
            guard let secret = try database.find(query, caller: Self.caller, withSecrets: true).first?.secret else { return nil }
            var bytes = Array(secret)
            defer { zeroize(&bytes) }
            return try DeviceState(storedBytes: bytes)
        } catch where error.code == .itemNotFound {
            return nil
        } catch {
            throw SyncEngineError(error)
        }
    }

    /// Saves `state` (in one keychain write: it is there whole or not at all); nothing when it is
    /// stored as it is already (a round that changed nothing writes nothing, so the agent's watch
    /// on the keychain file sees no change).
    func save(_ state: DeviceState) throws(SyncEngineError) {
        var bytes = state.wireBytes
        defer { zeroize(&bytes) }
        if var stored = (try? database.find(query, caller: Self.caller, withSecrets: true))?.first?.secret.map(Array.init) {
            defer { zeroize(&stored) }
            if stored == bytes { return }
        }
        do {
            var changes = ItemChanges()
            changes.secret = Data(bytes)
            do {
                _ = try database.update(query, with: changes, caller: Self.caller)
            } catch where error.code == .itemNotFound {
                var attributes = query.criteria
                attributes[.accessible] = .string(KeyClass.afterFirstUnlockThisDeviceOnly.rawValue)
                attributes[.label] = .string("Keyhaven sync: this device's keys")
                // Trusted by no application: only the sync engine, in its own process, reads it.
                _ = try database.add(NewItem(itemClass: .genericPassword, attributes: attributes, secret: Data(bytes),
                                             access: ItemAccess()), caller: Self.caller)
            }
        } catch {
            throw SyncEngineError(error)
        }
    }

    /// Forgets the state (`sync leave`).
    func remove() throws(SyncEngineError) {
        do {
            _ = try database.delete(query, caller: Self.caller, makeTombstones: false)
        } catch where error.code == .itemNotFound {
            return
        } catch {
            throw SyncEngineError(error)
        }
    }
}
