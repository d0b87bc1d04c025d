import Benchmark
import BenchmarkSupport
import Crypto
import Foundation
import KeychainServices

/// P-256 signing with a key stored in the keychain, found once as a `SecKey`: in process (the
/// key's material in this process) and through the agent (each signature an agent request), with
/// a bare swift-crypto signature of the same message measured in the same run as the anchor.
func registerKeyBenchmarks(_ backend: Backend) {
    let tag = Data("bench-signing-key".utf8)
    let message = Data(repeating: 0x42, count: 64)
    nonisolated(unsafe) var storedKey: SecKey?
    let setup: Benchmark.BenchmarkSetupHook = {
        try Fixture.use(items: 1_000)
        let query: [String: Any] = [kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: tag, kSecReturnRef as String: true]
        var result: CFTypeRef?
        if SecItemCopyMatching(query as CFDictionary, &result) != errSecSuccess {
            let parameters: [String: Any] = [kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256,
                                             kSecPrivateKeyAttrs as String: [kSecAttrIsPermanent as String: true, kSecAttrApplicationTag as String: tag]]
            _ = SecKeyCreateRandomKey(parameters as CFDictionary, nil)
        }
        result = nil
        if backend == .agent { try AgentFixture.shared.start() }
        _ = SecItemCopyMatching(query as CFDictionary, &result)
        storedKey = result as? SecKey
    }
    if backend == .inProcess {
        let bare = P256.Signing.PrivateKey()
        Benchmark("key sign bare swift-crypto p256") { benchmark in
            for _ in benchmark.scaledIterations { blackHole(try? bare.signature(for: message)) }
        }
    }
    Benchmark("\(backend.prefix)key sign stored p256", configuration: .init(setup: setup, teardown: backend.teardown { storedKey = nil })) { benchmark in
        for _ in benchmark.scaledIterations {
            blackHole(SecKeyCreateSignature(storedKey!, .ecdsaSignatureMessageX962SHA256, message as CFData, nil))
        }
    }
}
