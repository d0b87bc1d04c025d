import KeychainModel
import KeyhavenSyncCore

/// Why a sync command or the engine failed. Each code has an exit status for the command (an
/// OSStatus-style negative number, as `keyhaven` exits with for keychain errors) and a message
/// that names the failure, never an item or a key.
package struct SyncEngineError: Error, Sendable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String, Hashable, Sendable {
            case notJoined, alreadyJoined, removed, locked, keychain, server, refused, badArgument, pairing
        }
        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// This home takes no part in sync (`sync create`, `join` or `recover` first).
        package static let notJoined = Code(.notJoined)
        /// This home syncs already (`sync leave` first).
        package static let alreadyJoined = Code(.alreadyJoined)
        /// This device was removed from its account: it syncs no more; its items stay.
        package static let removed = Code(.removed)
        /// The keychain is locked: what sync needs of it waits for an unlock.
        package static let locked = Code(.locked)
        /// The keychain refused a read or a write (``SyncEngineError/storeCode``).
        package static let keychain = Code(.keychain)
        /// The server could not be reached, or refused (``SyncEngineError/client``).
        package static let server = Code(.server)
        /// What the server sent does not verify (``SyncEngineError/refusal`` names how).
        package static let refused = Code(.refused)
        /// A malformed argument (a server URL, a code, a key).
        package static let badArgument = Code(.badArgument)
        /// The pairing failed or timed out.
        package static let pairing = Code(.pairing)

        package var description: String { backing.rawValue }
    }

    package let code: Code
    package let message: String
    /// The protocol's named refusal, for ``Code/refused``.
    package let refusal: SyncError.Code?
    /// The keychain's OSStatus, for ``Code/keychain``.
    package let keychainStatus: Int32?

    package init(_ code: Code, _ message: String, refusal: SyncError.Code? = nil, keychainStatus: Int32? = nil) {
        (self.code, self.message, self.refusal, self.keychainStatus) = (code, message, refusal, keychainStatus)
    }

    /// A refusal of this device's own (not a pulled entry's), named as the protocol's are.
    static func refusal(_ code: SyncError.Code, _ message: String) -> SyncEngineError {
        SyncEngineError(.refused, "refused (\(code.name)): \(message)", refusal: code)
    }

    init(_ error: SyncError) {
        self.init(.refused, "what the server sent was refused (\(error.code.name)): \(error.message)", refusal: error.code)
    }

    init(_ error: SyncClientError) {
        self.init(.server, error.message)
    }

    init(_ error: StoreError) {
        if error.code == .interactionNotAllowed {
            self.init(.locked, "the keychain is locked here: it has a password, and this process has not unlocked it "
                      + "(with the agent running, `keyhaven unlock-keychain` lets the agent's background sync go on)")
        } else {
            self.init(.keychain, "the keychain refused: \(error.message) (\(error.code))", keychainStatus: error.code.appleStatus)
        }
    }

    /// The command's exit status: Apple's OSStatus where one fits, else errSecIO's neighbours.
    package var exitStatus: Int32 {
        switch code {
        case .locked: return -25308      // errSecInteractionNotAllowed
        case .notJoined: return -25300   // errSecItemNotFound
        case .alreadyJoined: return -25299 // errSecDuplicateItem
        case .badArgument: return -50    // errSecParam
        case .refused: return -26275     // errSecDecode
        case .removed: return -25293     // errSecAuthFailed
        case .pairing: return -25293
        case .keychain: return keychainStatus ?? -36
        default: return -36              // errSecIO
        }
    }

    /// The error as the agent answers it (to `syncNow`): the keychain error whose
    /// Apple status is ``exitStatus``, so the command exits with the same status either way.
    package var storeError: StoreError {
        StoreError(StoreError.Code.all.first { $0.appleStatus == exitStatus } ?? .io, message)
    }

    package var description: String { "\(code): \(message)" }
}
