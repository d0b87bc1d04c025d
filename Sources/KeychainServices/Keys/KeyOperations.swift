import Foundation
import KeychainKeys
import KeychainStore
import KeyhavenAgentClient

/// Where private-key operations run: on the material a `SecKey` holds, or inside the agent for a
/// key the agent holds (the private key never enters this process).
enum KeyOperations {
    static func sign(_ key: SecKey, _ algorithm: SecKeyAlgorithm, _ parsed: KeyAlgorithm, _ input: [UInt8]) throws(KeyError) -> [UInt8] {
        if let local = key.localKey { return try local.sign(parsed, input) }
        var request = try agentRequest(key, .sign)
        request.algorithm = algorithm.rawValue as String
        request.input = Data(input)
        return try run(key, request)
    }

    static func decrypt(_ key: SecKey, _ algorithm: SecKeyAlgorithm, _ parsed: KeyAlgorithm, _ input: [UInt8]) throws(KeyError) -> [UInt8] {
        if let local = key.localKey { return try local.decrypt(parsed, input) }
        var request = try agentRequest(key, .decrypt)
        request.algorithm = algorithm.rawValue as String
        request.input = Data(input)
        return try run(key, request)
    }

    static func exchange(_ key: SecKey, _ algorithm: SecKeyAlgorithm, _ parsed: KeyAlgorithm, with peer: AsymmetricKey,
                         requestedSize: Int?, sharedInfo: [UInt8]) throws(KeyError) -> [UInt8] {
        if let local = key.localKey {
            return try local.exchange(parsed, with: peer, requestedSize: requestedSize, sharedInfo: sharedInfo)
        }
        var request = try agentRequest(key, .keyExchange)
        request.algorithm = algorithm.rawValue as String
        request.peerPublicKey = peer.publicBytes
        request.peerKeyType = Int64(peer.kind.appleKeyType)
        request.requestedSize = requestedSize.map(Int64.init)
        request.sharedInfo = Data(sharedInfo)
        return try run(key, request)
    }

    /// The external representation: local material, or the agent's copy of an extractable key.
    static func externalRepresentation(_ key: SecKey) throws(KeyError) -> [UInt8] {
        guard key.isExtractable || !key.isPrivate else { throw KeyError(.notExtractable, "the key is not extractable") }
        if let local = key.localKey { return local.withExternalRepresentation { $0 } }
        return try run(key, try agentRequest(key, .export))
    }

    private static func agentRequest(_ key: SecKey, _ operation: KeyOperationRequest.Operation) throws(KeyError) -> KeyOperationRequest {
        switch key.backing {
        case .agent(_, let reference, _): return KeyOperationRequest(operation, reference: reference)
        // A key in no keychain has no reference: the agent reads the key's data instead.
        case .enclave: return KeyOperationRequest(operation, reference: .rowID(.key, 0))
        case .local: throw .param("the key is not held by the agent")
        }
    }

    private static func run(_ key: SecKey, _ request: KeyOperationRequest) throws(KeyError) -> [UInt8] {
        do throws(StoreError) {
            switch key.backing {
            case .agent(_, _, let keychain):
                return Array(try keychain.keyOperation(request, caller: AccessGroupConfiguration.currentCaller()))
            case .enclave(_, let enclaveKey, let agent):
                return Array(try agent.enclaveKeyOperation(request, key: enclaveKey))
            case .local:
                throw StoreError(.invalidParameter, "the key is not held by the agent")
            }
        } catch {
            throw KeyError.fromStatus(error.osStatus, error.message)
        }
    }
}
