import KeychainKeys

/// Where private-key operations run. Today: in this process, on the key the `SecKey` holds.
enum KeyOperations {
    static func sign(_ key: SecKey, _ algorithm: KeyAlgorithm, _ input: [UInt8]) throws(KeyError) -> [UInt8] {
        try key.key.sign(algorithm, input)
    }

    static func decrypt(_ key: SecKey, _ algorithm: KeyAlgorithm, _ input: [UInt8]) throws(KeyError) -> [UInt8] {
        try key.key.decrypt(algorithm, input)
    }

    static func exchange(_ key: SecKey, _ algorithm: KeyAlgorithm, with peer: AsymmetricKey, requestedSize: Int?,
                         sharedInfo: [UInt8]) throws(KeyError) -> [UInt8] {
        try key.key.exchange(algorithm, with: peer, requestedSize: requestedSize, sharedInfo: sharedInfo)
    }
}
