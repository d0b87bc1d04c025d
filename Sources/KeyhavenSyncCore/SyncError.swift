/// Why a pulled log, an entry or a sealed record was refused, or a sync request could not be made.
///
/// Each refusal a device makes of what a server sent has a code of its own, so that `sync now`,
/// `sync status` and the library can name it. The message says what was wrong; it never holds
/// key material, plaintext or item data (swift-certificates' error shape: a code struct over a
/// private enum, so codes can be added).
package struct SyncError: Error, Sendable, Hashable, CustomStringConvertible {
    package struct Code: Hashable, Sendable, CustomStringConvertible {
        private enum Backing: String, Hashable, Sendable {
            case malformed, replayedEntry, headRegression, brokenChain, aeadFailure, badSignature, unknownDevice
            case formatDowngrade, forkDetected, staleDevice, missingKeyShare, wrongAccount, staleEpoch
            case pairingAuthenticationFailure
        }
        private let backing: Backing
        private init(_ backing: Backing) { self.backing = backing }

        /// Bytes that do not decode as what they should be.
        package static let malformed = Code(.malformed)
        /// An entry a device already signed with that counter, offered again (at any position).
        package static let replayedEntry = Code(.replayedEntry)
        /// The server's head is behind the head this device verified (a rollback).
        package static let headRegression = Code(.headRegression)
        /// An entry whose sequence number or previous hash does not follow the one before it.
        package static let brokenChain = Code(.brokenChain)
        /// A sealed record or key share that does not open (tampered, swapped, or not ours).
        package static let aeadFailure = Code(.aeadFailure)
        /// An entry whose signature does not verify with its device's key.
        package static let badSignature = Code(.badSignature)
        /// An entry signed by a device that is not (or no longer) on the account's roster.
        package static let unknownDevice = Code(.unknownDevice)
        /// An entry in an older format than the log already uses.
        package static let formatDowngrade = Code(.formatDowngrade)
        /// Another entry at a position this device verified: the server shows different histories.
        package static let forkDetected = Code(.forkDetected)
        /// A device that has not been heard from for too long.
        package static let staleDevice = Code(.staleDevice)
        /// The key of an epoch this device holds no share of.
        package static let missingKeyShare = Code(.missingKeyShare)
        /// An entry of another account.
        package static let wrongAccount = Code(.wrongAccount)
        /// An item entry under a key epoch the log has rotated away from.
        package static let staleEpoch = Code(.staleEpoch)

        /// A pairing message whose MAC does not verify with the code (a wrong code, or a message
        /// the relay changed: another public key, another account).
        package static let pairingAuthenticationFailure = Code(.pairingAuthenticationFailure)

        /// The code's name as people read it: "fork detected", "bad signature".
        package var name: String {
            switch backing {
            case .aeadFailure: return "AEAD failure"
            default:
                return backing.rawValue.reduce(into: "") { text, character in
                    if character.isUppercase { text += " " + character.lowercased() } else { text.append(character) }
                }
            }
        }

        package var description: String { backing.rawValue }
    }

    package let code: Code
    package let message: String

    package init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    package var description: String { "\(code.name): \(message)" }
}
