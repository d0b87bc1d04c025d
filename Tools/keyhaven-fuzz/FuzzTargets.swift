import Crypto
import Foundation
import KeychainServices
import KeychainStore
import KeyhavenAgentClient

/// The decoders and translators that take bytes or dictionaries from outside: each must return
/// or throw, never crash, hang or allocate without bound, whatever it is given.
enum FuzzTarget: String, CaseIterable {
    /// The item metadata blob after decryption (padding, then the attribute encoding).
    case metadata
    /// The keybag's wrapped keys, the KDF parameters and the lock settings in the header.
    case keybag
    /// Agent protocol frames, both directions.
    case agent
    /// SecItem query, attribute and update dictionaries, on a real keychain.
    case query
    /// Key external representations, algorithm names, signatures, ciphertexts and peer keys.
    case keys
    /// DER certificates, PEM text and PKCS#12 files.
    case certificates
    /// What SecItemImport reads: PEM, DER and encrypted keys, certificates, PKCS#12.
    case imports
    /// What a sync server sends a device: log entries, sealed records, key shares.
    case sync
    /// What an SSH agent client sends: messages, session bindings, certificates, constraints.
    case ssh

    func run(_ bytes: [UInt8]) {
        switch self {
        case .metadata:
            _ = try? Padding.unpad(bytes)
            _ = try? ItemMetadata(decoding: bytes)
        case .keybag:
            _ = try? KeychainCrypto.unwrap(Data(bytes), under: Self.fixedKey)
            _ = try? PasswordKDF(decoding: Data(bytes))
            _ = try? LockSettings(decoding: bytes)
            _ = PersistentReference(Data(bytes))
        case .agent:
            _ = try? AgentFraming.decodeWithHome(AgentRequest.self, from: bytes)
            _ = try? AgentFraming.decode(AgentResponse.self, from: bytes)
        case .query:
            QueryFuzzer.run(bytes)
        case .keys:
            KeyFuzzer.run(bytes)
        case .certificates:
            CertificateFuzzer.run(bytes)
        case .imports:
            ImportFuzzer.run(bytes)
        case .sync:
            SyncFuzzer.run(bytes)
        case .ssh:
            SSHFuzzer.run(bytes)
        }
    }

    static let fixedKey = SymmetricKey(data: [UInt8](repeating: 0x42, count: 32))
}
