import Foundation
import KeychainServices
import KeychainStore
import KeychainTestSupport
import Testing

/// Keys like passwords: every byte of a stored private key's row flipped in turn never yields a
/// different key (a signature that does not verify with the original public key) or a crash; the
/// damaged key is errSecDecode or hidden, and a second key stays usable.
@Suite(.freshKeychain())
struct KeyTamperTests {
    static var message: CFData { Data("tamper with the key".utf8) as CFData }

    func makeKey(_ tag: String) throws -> SecKey {
        let parameters: [String: Any] = [kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom, kSecAttrKeySizeInBits as String: 256,
                                         kSecPrivateKeyAttrs as String: [kSecAttrIsPermanent as String: true,
                                                                         kSecAttrApplicationTag as String: Data(tag.utf8)]]
        var error: Unmanaged<CFError>?
        guard let key = SecKeyCreateRandomKey(parameters as CFDictionary, &error) else { throw error!.takeRetainedValue() }
        return key
    }

    /// Finds the key tagged `tag` and signs with it: success only if the signature verifies with
    /// `publicKey`; -1 for a key that signs but is not the original; else the status.
    static func signs(_ tag: String, verifiedBy publicKey: SecKey) -> OSStatus {
        var result: CFTypeRef?
        let status = SecItemCopyMatching([kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Data(tag.utf8),
                                          kSecReturnRef as String: true] as CFDictionary, &result)
        guard status == errSecSuccess else { return status }
        guard let key = result as? SecKey,
              let signature = SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message, nil) else { return errSecDecode }
        return SecKeyVerifySignature(publicKey, .ecdsaSignatureMessageX962SHA256, message, signature, nil) ? errSecSuccess : -1
    }

    @Test("Every byte of a key row flipped: errSecDecode or hidden, never another key; the other key signs")
    func keyRow() throws {
        let victim = try #require(SecKeyCopyPublicKey(try makeKey("victim")))
        let bystander = try #require(SecKeyCopyPublicKey(try makeKey("bystander")))
        let path = TestHome.current!.keychainPath
        let raw = try SQLiteConnection(path: path, create: false)
        let columns = try raw.prepare("SELECT * FROM keys").columnNames.filter { $0 != "rowid" }
        let row = try #require(try raw.prepare("SELECT \(columns.joined(separator: ", ")) FROM keys WHERE rowid = 1").rows().first)
        var flips = 0
        for (index, column) in columns.enumerated() {
            let update = try raw.prepare("UPDATE keys SET \(column) = ? WHERE rowid = 1")
            guard case .blob(let original) = row[index] else { continue }
            for position in stride(from: 0, to: original.count, by: max(1, original.count / 24)) {
                var flipped = original
                flipped[position] ^= 0xFF
                try update.run([.blob(flipped)])
                KeychainRegistry.shared.closeAll()
                let status = Self.signs("victim", verifiedBy: victim)
                #expect([errSecSuccess, errSecDecode, errSecItemNotFound].contains(status), "\(column)[\(position)]: \(status)")
                #expect(Self.signs("bystander", verifiedBy: bystander) == errSecSuccess, "\(column)[\(position)]")
                flips += 1
            }
            try update.run([.blob(original)])
        }
        KeychainRegistry.shared.closeAll()
        #expect(Self.signs("victim", verifiedBy: victim) == errSecSuccess)
        #expect(flips > 100)
        Reliability.record("tampering: \(flips) single-byte flips of a key row; another key used: 0")
    }
}

/// SIGKILL during key adds: every key whose add returned is there afterwards and signs for its
/// public key; the one in flight is whole or absent. (The helper writes to the group
/// "multi.process.group", which the test's groups include.)
@Suite(.freshKeychain(accessGroups: ["multi.process.group"]))
struct KeyCrashTests {
    @Test("SIGKILL at random moments during stored-key generation loses no acknowledged key")
    func killedDuringKeyAdds() throws {
        let kills = Reliability.count(quick: 15, full: 200)
        var acknowledged: [(tag: String, publicKey: Data)] = []
        for run in 0..<kills {
            let started = try HelperProcess.start(["keys", "k\(run)", "100000"])
            // The random moment counts from the first key acknowledged, not from the start: a
            // loaded machine can take longer than the window to start the helper at all.
            let first = HelperProcess.read(started, until: "\n")
            usleep(UInt32.random(in: 0...120_000))
            kill(started.0.processIdentifier, SIGKILL)
            let (_, rest) = HelperProcess.finish(started)
            for line in (first + rest).split(separator: "\n") {
                let parts = line.split(separator: " ").map(String.init)
                guard parts.count == 3, parts[0] == "K", let bytes = Data(hexString: parts[2]) else { continue }
                acknowledged.append(("k\(run)-\(parts[1])", bytes))
            }
        }
        KeychainRegistry.shared.closeAll()
        let message = Data("after the crash".utf8) as CFData
        for (tag, publicBytes) in acknowledged {
            var result: CFTypeRef?
            let status = SecItemCopyMatching([kSecClass as String: kSecClassKey, kSecAttrApplicationTag as String: Data(tag.utf8),
                                              kSecReturnRef as String: true] as CFDictionary, &result)
            #expect(status == errSecSuccess, "\(tag) lost: \(status)")
            guard let key = result as? SecKey, let signature = SecKeyCreateSignature(key, .ecdsaSignatureMessageX962SHA256, message, nil)
            else { continue }
            let attributes: [String: Any] = [kSecAttrKeyType as String: kSecAttrKeyTypeECSECPrimeRandom,
                                             kSecAttrKeyClass as String: kSecAttrKeyClassPublic]
            let publicKey = try #require(SecKeyCreateWithData(publicBytes as CFData, attributes as CFDictionary, nil))
            #expect(SecKeyVerifySignature(publicKey, .ecdsaSignatureMessageX962SHA256, message, signature, nil), "\(tag) is another key")
        }
        var all: CFTypeRef?
        #expect(SecItemCopyMatching([kSecClass as String: kSecClassKey, kSecMatchLimit as String: kSecMatchLimitAll,
                                     kSecReturnAttributes as String: true] as CFDictionary, &all) == errSecSuccess)
        let stored = (all as? [[String: Any]])?.count ?? 0
        #expect(stored >= acknowledged.count && stored <= acknowledged.count + kills)
        #expect(acknowledged.count > 0)
        Reliability.record("crashes: \(kills) SIGKILLs during key adds, \(acknowledged.count) keys acknowledged, \(stored) stored; lost: 0")
    }
}

extension Data {
    init?(hexString: String) {
        var bytes: [UInt8] = []
        var index = hexString.startIndex
        while index < hexString.endIndex {
            let next = hexString.index(index, offsetBy: 2, limitedBy: hexString.endIndex) ?? hexString.endIndex
            guard let byte = UInt8(hexString[index..<next], radix: 16) else { return nil }
            bytes.append(byte)
            index = next
        }
        self.init(bytes)
    }
}
