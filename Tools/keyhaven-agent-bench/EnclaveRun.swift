import Foundation
import KeychainServices

/// `--only enclave`: a P-256 signature (`ecdsaSignatureMessageX962SHA256` over 64 bytes) with a
/// Secure Enclave key in the TPM (`KEYHAVEN_TPM`, the agent's) against the same with a P-256 key
/// stored in the keychain, both through the agent, in alternating batches of one run.
struct EnclaveRun {
    let options: Options

    struct Result {
        var tpm = Latencies()
        var keychain = Latencies()
    }

    func run() throws -> Result {
        guard ProcessInfo.processInfo.environment["KEYHAVEN_TPM"] != nil else {
            throw BenchFailure("--only enclave needs KEYHAVEN_TPM, the TPM's TCTI (scripts/bench-tpm.sh starts swtpm)")
        }
        let home = NSTemporaryDirectory() + "keyhaven-enclave-bench-\(getpid())"
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        defer { try? FileManager.default.removeItem(atPath: home) }
        setenv("KEYHAVEN_HOME", home, 1)
        let agent = try BenchAgent(executable: options.agent, home: home)
        defer { agent.stop() }
        BenchAgent.route(throughAgent: true)
        let tpmKey = try Self.makeKey(tag: "bench.tpm", enclave: true)
        let keychainKey = try Self.makeKey(tag: "bench.keychain", enclave: false)
        let message = Data(repeating: 0x42, count: 64) as CFData
        var result = Result()
        for round in 0...options.rounds {
            var tpm = Latencies(), keychain = Latencies()
            for _ in 0..<options.batch {
                timed(&tpm) { if SecKeyCreateSignature(tpmKey, .ecdsaSignatureMessageX962SHA256, message, nil) == nil { fail("a TPM signature failed") } }
                timed(&keychain) {
                    if SecKeyCreateSignature(keychainKey, .ecdsaSignatureMessageX962SHA256, message, nil) == nil { fail("a keychain signature failed") }
                }
            }
            // Round 0 warms up: the TPM's storage key is made on the agent's first use.
            if round > 0 {
                result.tpm.append(contentsOf: tpm)
                result.keychain.append(contentsOf: keychain)
            }
        }
        return result
    }

    private static func makeKey(tag: String, enclave: Bool) throws -> SecKey {
        var parameters: [String: Any] = [
            kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256,
            kSecPrivateKeyAttrs as String: [kSecAttrIsPermanent as String: true, kSecAttrApplicationTag as String: Data(tag.utf8)],
        ]
        if enclave { parameters[kSecAttrTokenID as String] = kSecAttrTokenIDSecureEnclave }
        var error: Unmanaged<CFError>?
        guard let key = SecKeyCreateRandomKey(parameters as CFDictionary, &error) else {
            throw BenchFailure("the \(tag) key could not be made: \(String(describing: error?.takeRetainedValue()))")
        }
        return key
    }
}
