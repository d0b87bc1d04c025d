import Foundation
import KeychainKeys
import KeychainStore
import KeyhavenAgentClient

/// `SecKeyCreateRandomKey` with `kSecAttrTokenID: kSecAttrTokenIDSecureEnclave`: a P-256 key made
/// inside the TPM (docs/tpm.md), which the agent holds.
enum EnclaveKeys {
    /// The new key; with `kSecAttrIsPermanent` its item is added as Apple adds a Secure Enclave
    /// key's: a key item whose data is the token's blob and whose `tkid` is set.
    static func create(_ params: KeyParameters) throws(KeyError) -> SecKey {
        guard let token = params.entries[.tokenID] as? String, token == EnclaveKeyData.tokenID else {
            throw KeyError(.unsupportedAlgorithm, "kSecAttrTokenID: no such token on this machine")
        }
        guard try params.keyType() == 73, (try params.keySize() ?? 256) == 256 else {
            throw .param("the Secure Enclave makes 256-bit elliptic curve keys (kSecAttrKeyTypeECSECPrimeRandom) only")
        }
        let key: SecKey
        do throws(StoreError) {
            let agent = try Self.agent()
            key = try SecKey(enclaveKey: agent.createEnclaveKey(), agent: agent)
        } catch {
            throw KeyError.fromStatus(error.osStatus, error.message)
        }
        var privateAttributes = params.attributes(forPrivateKey: true)
        privateAttributes[.tokenID] = EnclaveKeyData.tokenID
        let publicAttributes = params.attributes(forPrivateKey: false)
        if KeyParameters.boolean(publicAttributes[.isPermanent]) == true {
            _ = try KeyStorage.addGenerated(SecKey(key.publicKey), attributes: publicAttributes.filter { $0.key != AttributeName.tokenID.code })
        }
        if KeyParameters.boolean(privateAttributes[.isPermanent]) == true {
            return try KeyStorage.addGenerated(key, attributes: privateAttributes)
        }
        return key
    }

    /// The agent, which holds the TPM: without one the key cannot be made (the library never
    /// opens the TPM itself, since a TPM without a resource manager serves one connection).
    private static func agent() throws(StoreError) -> AgentKeychain {
        let home = try KeychainHome.current()
        guard let socket = try AgentDiscovery.socket(for: home) else {
            throw StoreError(.notAvailable, "Secure Enclave keys are made in the TPM the agent holds: start it (keyhaven agent start)")
        }
        return AgentKeychain(path: home.defaultKeychainPath, socket: socket, home: home.path)
    }

    /// The `SecKey` of a Secure Enclave key item read in this process (the agent off): its
    /// operations still need the agent, which is found when one is used.
    static func key(from item: StoredItem) -> SecKey? {
        guard item.attributes[.tokenID] == .string(EnclaveKeyData.tokenID), let secret = item.secret,
              let data = try? EnclaveKeyData(storedBytes: Array(secret)), let agent = try? Self.agent() else { return nil }
        return try? SecKey(enclaveKey: data, agent: agent)
    }
}
