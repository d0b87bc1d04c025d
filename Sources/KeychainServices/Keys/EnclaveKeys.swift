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
        guard let token = params.entries["tkid"] as? String, token == EnclaveKeyData.tokenID else {
            throw KeyError(.unsupportedAlgorithm, "kSecAttrTokenID: no such token on this machine")
        }
        guard try params.keyType() == 73, (try params.keySize() ?? 256) == 256 else {
            throw .param("the Secure Enclave makes 256-bit elliptic curve keys (kSecAttrKeyTypeECSECPrimeRandom) only")
        }
        let agent = try Self.agent()
        let made: EnclaveKeyData
        do { made = try agent.createEnclaveKey() } catch { throw KeyError.fromStatus(error.osStatus, error.message) }
        guard let publicKey = try? AsymmetricKey(externalRepresentation: Array(made.publicKey), keyType: 73, isPrivate: false) else {
            throw KeyError.fromStatus(StoreError.Code.decode.appleStatus, "the TPM gave a public key that is not a P-256 point")
        }
        let key = SecKey(enclaveKey: publicKey, key: made, agent: agent)
        var privateAttributes = params.attributes(forPrivateKey: true)
        privateAttributes["tkid"] = EnclaveKeyData.tokenID
        let publicAttributes = params.attributes(forPrivateKey: false)
        if KeyParameters.boolean(publicAttributes["perm"]) == true {
            _ = try KeyStorage.addGenerated(SecKey(publicKey), attributes: publicAttributes.filter { $0.key != "tkid" })
        }
        if KeyParameters.boolean(privateAttributes["perm"]) == true {
            return try KeyStorage.addGenerated(key, attributes: privateAttributes)
        }
        return key
    }

    /// The agent, which holds the TPM: without one the key cannot be made (the library never
    /// opens the TPM itself, since a TPM without a resource manager serves one connection).
    private static func agent() throws(KeyError) -> AgentKeychain {
        do throws(StoreError) {
            let home = try KeychainHome.current()
            guard let socket = try AgentDiscovery.socket(for: home) else {
                throw StoreError(.notAvailable, "Secure Enclave keys are made in the TPM the agent holds: start it (keyhaven agent start)")
            }
            return AgentKeychain(path: home.defaultKeychainPath, socket: socket, home: home.path)
        } catch {
            throw KeyError.fromStatus(error.osStatus, error.message)
        }
    }

    /// The `SecKey` of a Secure Enclave key item read in this process (the agent off): its
    /// operations still need the agent, which is found when one is used.
    static func key(from item: StoredItem) -> SecKey? {
        guard item.attributes["tkid"] == .string(EnclaveKeyData.tokenID), let secret = item.secret,
              let data = try? EnclaveKeyData(storedBytes: Array(secret)),
              let publicKey = try? AsymmetricKey(externalRepresentation: Array(data.publicKey), keyType: 73, isPrivate: false),
              let home = try? KeychainHome.current(), let socket = try? AgentDiscovery.socket(for: home) else { return nil }
        return SecKey(enclaveKey: publicKey, key: data, agent: AgentKeychain(path: home.defaultKeychainPath, socket: socket, home: home.path))
    }
}
