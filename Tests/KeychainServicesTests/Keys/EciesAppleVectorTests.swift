import Crypto
import Foundation
import KeychainServices
import Testing

/// Ciphertexts made by Apple's own SecKeyCreateEncryptedData open here (Tests/Fixtures/ecies-apple
/// says where they come from), and what Keyhaven makes opens with the same construction read back.
struct EciesAppleVectorTests {
    struct Vector: Decodable, Sendable, CustomStringConvertible {
        let name: String, algorithm: String, key: String, ciphertext: String
        var description: String { name }
    }
    struct File: Decodable { let vectors: [Vector] }

    static let vectors: [Vector] = {
        let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/ecies-apple/vectors.json")
        guard let data = try? Data(contentsOf: path), let file = try? JSONDecoder().decode(File.self, from: data) else { return [] }
        return file.vectors
    }()

    /// Apple's private key representation (`04 || X || Y || K`) of a SEC1 DER key.
    static func appleRepresentation(sec1 base64: String) throws -> Data {
        let der = try #require(Data(base64Encoded: base64))
        if let key = try? P256.Signing.PrivateKey(derRepresentation: der) { return key.x963Representation }
        if let key = try? P384.Signing.PrivateKey(derRepresentation: der) { return key.x963Representation }
        return try P521.Signing.PrivateKey(derRepresentation: der).x963Representation
    }

    @Test("The fixture holds Apple's vectors")
    func fixtureLoads() {
        #expect(Self.vectors.count == 5)
    }

    @Test("Apple-made ECIES ciphertexts decrypt to their plaintexts", arguments: vectors)
    func appleCiphertextDecrypts(_ vector: Vector) throws {
        let key = try KeyTest.key(try Self.appleRepresentation(sec1: vector.key), type: kSecAttrKeyTypeECSECPrimeRandom, isPrivate: true)
        let algorithm = SecKeyAlgorithm(rawValue: NSString(string: vector.algorithm))
        let ciphertext = try #require(Data(base64Encoded: vector.ciphertext))
        var error: Unmanaged<CFError>?
        let plaintext = try #require(SecKeyCreateDecryptedData(key, algorithm, ciphertext as CFData, &error))
        #expect(String(decoding: plaintext as Data, as: UTF8.self) == vector.name)
        // The other IV variant of the same hash must not open it: the vector pins the variant.
        let other = vector.algorithm.hasSuffix("-KDFIV") ? String(vector.algorithm.dropLast(6)) : vector.algorithm + "-KDFIV"
        #expect(SecKeyCreateDecryptedData(key, SecKeyAlgorithm(rawValue: NSString(string: other)), ciphertext as CFData, &error) == nil)
    }
}
