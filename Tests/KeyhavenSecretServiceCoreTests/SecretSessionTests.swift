import FoundationEssentials
import KeychainModel
import KeyhavenDBus
import KeyhavenSecretServiceCore
import Testing

/// How secrets cross the bus: both ends of a session, without a bus.
@Suite("Secret Service sessions")
struct SecretSessionTests {
    static let path = "/org/freedesktop/secrets/session/s1"

    /// A provider's and a client's end of one `dh-ietf1024-sha256-aes128-cbc-pkcs7` session.
    static func agreedPair() throws -> (provider: SecretSession, client: SecretSession) {
        let exchange = try DiffieHellman()
        let (provider, providerKey) = try SecretSession.negotiate(path: path, owner: ":1.7", clientPublicKey: exchange.publicKey)
        let client = try SecretSession.client(path: path, exchange: exchange, providerPublicKey: providerKey)
        return (provider, client)
    }

    static func fields(_ value: BusValue) -> [BusValue] {
        guard case .structure(let fields) = value else { return [] }
        return fields
    }

    @Test("Both ends of a DH session agree: what one encrypts the other reads, with its content type")
    func dhRoundTrip() throws {
        let (provider, client) = try Self.agreedPair()
        let secret = Data("correct horse battery staple".utf8)
        let sent = try client.encode(secret, contentType: "text/plain; charset=utf8")
        let read = try provider.decode(sent)
        #expect(read.secret == secret)
        #expect(read.contentType == "text/plain; charset=utf8")
        let back = try client.decode(try provider.encode(Data([0, 1, 2, 255]), contentType: "application/octet-stream"))
        #expect(back.secret == Data([0, 1, 2, 255]))
        #expect(provider.owner == ":1.7")
    }

    @Test("A DH secret on the bus is AES-128-CBC under a fresh 16-byte IV: never the secret itself, never the same twice")
    func dhCiphertextIsFresh() throws {
        let (provider, _) = try Self.agreedPair()
        let secret = Data(repeating: 0x41, count: 40)
        let first = Self.fields(try provider.encode(secret, contentType: "text/plain"))
        let second = Self.fields(try provider.encode(secret, contentType: "text/plain"))
        #expect(first.count == 4 && second.count == 4)
        #expect(first[0].stringValue == Self.path)
        #expect(first[1].bytesValue?.count == 16)
        #expect(first[1].bytesValue != second[1].bytesValue)
        #expect(first[2].bytesValue?.count == 48)  // 40 bytes padded to whole blocks
        #expect(first[2].bytesValue != second[2].bytesValue)
        #expect(first[2].bytesValue != Array(secret))
    }

    @Test("Two sessions' keys differ: one session's secret does not decrypt in another")
    func sessionsDoNotShareKeys() throws {
        let (provider, _) = try Self.agreedPair()
        let (_, otherClient) = try Self.agreedPair()
        var refused = 0
        // CBC with PKCS#7 has no integrity: a wrong key gives valid-looking padding about once in
        // 256 tries, so the check is over many secrets, and a read never returns the secret.
        for index in 0..<32 {
            let secret = Data("secret number \(index)".utf8)
            let sent = try otherClient.encode(secret, contentType: "text/plain")
            do {
                let read = try provider.decode(sent)
                #expect(read.secret != secret)
            } catch {
                #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs")
                refused += 1
            }
        }
        #expect(refused >= 24)
    }

    @Test("A malformed secret struct is InvalidArgs: another session's path, a short IV, a partial block, no ciphertext")
    func malformedSecrets() throws {
        let (provider, client) = try Self.agreedPair()
        let good = Self.fields(try client.encode(Data("x".utf8), contentType: "text/plain"))
        let malformed: [BusValue] = [
            .structure([.objectPath("/org/freedesktop/secrets/session/other"), good[1], good[2], good[3]]),
            .structure([good[0], .bytes(Array(repeating: 0, count: 15)), good[2], good[3]]),
            .structure([good[0], good[1], .bytes(Array(repeating: 0, count: 17)), good[3]]),
            .structure([good[0], good[1], .bytes([]), good[3]]),
            .structure([good[0], good[1], good[2]]),
            .string("not a struct"),
        ]
        for value in malformed {
            #expect(throws: BusError.self) { try provider.decode(value) }
            do { _ = try provider.decode(value) } catch { #expect(error.name == "org.freedesktop.DBus.Error.InvalidArgs") }
        }
    }

    @Test("A plain session passes the secret as it is, and refuses parameters it cannot use")
    func plainSession() throws {
        let session = SecretSession.plain(path: Self.path, owner: ":1.9")
        let value = try session.encode(Data("hunter2".utf8), contentType: "text/plain")
        let fields = Self.fields(value)
        #expect(fields[1].bytesValue == [])
        #expect(fields[2].bytesValue == Array("hunter2".utf8))
        #expect(try session.decode(value).secret == Data("hunter2".utf8))
        let withParameters = BusValue.structure([fields[0], .bytes([1, 2, 3]), fields[2], fields[3]])
        #expect(throws: BusError.self) { try session.decode(withParameters) }
    }

    @Test("A peer's public key outside [2, p - 2] is refused: 0, 1 and p - 1 would give a known shared secret")
    func weakPeerKeys() throws {
        let exchange = try DiffieHellman()
        // p - 1 is the prime with its last byte (0xFF) less one.
        let prime = Self.rfc2409Prime
        var primeMinusOne = prime
        primeMinusOne[primeMinusOne.count - 1] -= 1
        for weak in [[0], [1], Array(repeating: 0, count: 127) + [1], primeMinusOne, prime, [], Array(repeating: 0xFF, count: 129)] as [[UInt8]] {
            #expect(throws: BusError.self) {
                _ = try SecretSession.negotiate(path: Self.path, owner: ":1.7", clientPublicKey: weak)
            }
            #expect(throws: BusError.self) {
                _ = try SecretSession.client(path: Self.path, exchange: exchange, providerPublicKey: weak)
            }
        }
        #expect(exchange.publicKey.count == 128)
    }

    /// RFC 2409, section 6.2: the Second Oakley Group's prime.
    static let rfc2409Prime: [UInt8] = {
        let hex = "FFFFFFFFFFFFFFFFC90FDAA22168C234C4C6628B80DC1CD129024E088A67CC74020BBEA63B139B22514A08798E3404DD"
            + "EF9519B3CD3A431B302B0A6DF25F14374FE1356D6D51C245E485B576625E7EC6F44C42E9A637ED6B0BFF5CB6F406B7ED"
            + "EE386BFB5A899FA5AE9F24117C4B1FE649286651ECE65381FFFFFFFFFFFFFFFF"
        var bytes: [UInt8] = []
        var index = hex.startIndex
        while index < hex.endIndex {
            let next = hex.index(index, offsetBy: 2)
            bytes.append(UInt8(hex[index..<next], radix: 16)!)
            index = next
        }
        return bytes
    }()
}
