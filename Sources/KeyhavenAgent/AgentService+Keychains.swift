import FoundationEssentials
import KeychainStore
import KeyhavenAgentClient

/// The requests about whole keychains: made, deleted, unlocked and locked, their password,
/// settings, TPM binding and backups. Passwords are copied out of the request once and wiped.
extension AgentService {
    func create(_ keychain: String, password: Data?) throws(StoreError) -> AgentAnswer {
        _ = try registry.create(at: keychain, home: home, password: password.map(Array.init))
        return .done
    }

    func deleteKeychain(_ keychain: String) throws(StoreError) -> AgentAnswer {
        try registry.deleteKeychain(at: keychain)
        return .done
    }

    func unlock(_ keychain: String, password: Data) throws(StoreError) -> AgentAnswer {
        var secret = Array(password)
        defer { zeroize(&secret) }
        try database(keychain).unlock(password: secret)
        return .done
    }

    /// Locks `keychain`, or every keychain the agent has open when it is nil.
    func lock(_ keychain: String?) throws(StoreError) -> AgentAnswer {
        if let keychain { try database(keychain).lock() } else { registry.lockAll() }
        return .done
    }

    func changePassword(_ keychain: String, old: Data, new: Data) throws(StoreError) -> AgentAnswer {
        var (oldSecret, newSecret) = (Array(old), Array(new))
        defer { zeroize(&oldSecret); zeroize(&newSecret) }
        try database(keychain).changePassword(old: oldSecret, new: newSecret)
        return .done
    }

    func setSettings(_ keychain: String, _ settings: LockSettings) throws(StoreError) -> AgentAnswer {
        try database(keychain).setLockSettings(settings)
        return .done
    }

    func setBound(_ keychain: String, password: Data?, bound: Bool) throws(StoreError) -> AgentAnswer {
        var secret = password.map(Array.init) ?? []
        defer { zeroize(&secret) }
        try database(keychain).setBound(bound, password: secret)
        return .done
    }

    func backup(_ keychain: String, to destination: String, password: Data) throws(StoreError) -> AgentAnswer {
        var secret = Array(password)
        defer { zeroize(&secret) }
        try database(keychain).backup(to: destination, password: secret)
        return .done
    }
}
