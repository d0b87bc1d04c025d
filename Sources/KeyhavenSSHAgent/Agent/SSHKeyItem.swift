import FoundationEssentials
import KeychainModel

/// An SSH key kept in a keychain (`keyhaven-ssh-agent --keychain`, `keyhaven ssh new-key`): a
/// generic password whose secret is the private key in the agent protocol's encoding
/// (``PrivateKeyFields/encoded(keyType:)``).
///
/// One item class holds every key type: Apple's keychain has no key type for Ed25519, and Apple's
/// advice for Curve25519 keys is a generic password; RSA and ECDSA keys take the same shape, so
/// that every SSH key is found, listed and guarded the same way. The public half is in
/// `kSecAttrGeneric` with the key's options, so listing the keys reads no secret. The item is
/// `kSecAttrAccessibleWhenUnlocked`: a locked keychain signs nothing until the user unlocks it.
package struct SSHKeyItem: Sendable, Equatable {
    /// How the key came into the keychain, which decides what may remove it.
    package enum Origin: UInt8, Sendable {
        /// Added by a client (`ssh-add FILE`): the file still has it, so `ssh-add -d` and `-D`
        /// remove it, as they remove keys from OpenSSH's agent.
        case added = 1
        /// Made in the keychain (`keyhaven ssh new-key`): its only copy, which no agent client
        /// removes (`keyhaven ssh delete` and Keychain Access do).
        case made = 2
    }

    /// The key's public blob, or its certificate's.
    package let publicBlob: [UInt8]
    package let comment: String
    package let confirm: Bool
    package let origin: Origin
    /// Whether the private key is inside the TPM (ECDSA P-256, `keyhaven ssh new-key --tpm`): the
    /// item's secret is then the TPM's wrapped key and its authorization, which only this
    /// machine's TPM can use, and the item never syncs.
    package let inTPM: Bool
    /// The SSHSIG namespaces the key may sign in (`keyhaven ssh new-key --namespace git`); empty:
    /// any use. A key limited to namespaces signs nothing else, logins included.
    package let namespaces: [String]

    /// `kSecAttrService` of every SSH key item.
    package static let service = "keyhaven.ssh-key"
    /// The access group of SSH key items: the agent finds them there; the key item's access
    /// object, not the group, decides which programs may sign with it (a synced copy's, the one
    /// ``ReplicaAccess`` gives it where it arrives).
    package static let group = ReplicaAccess.sshKeys
    /// `kSecAttrDescription`, the kind Keychain Access shows.
    package static let kind = "SSH key"

    package init(publicBlob: [UInt8], comment: String, confirm: Bool, origin: Origin, inTPM: Bool = false, namespaces: [String] = []) {
        (self.publicBlob, self.comment, self.confirm, self.origin, self.inTPM) = (publicBlob, comment, confirm, origin, inTPM)
        self.namespaces = namespaces
    }

    /// Whether the key may sign data of `namespace` (nil: not an SSHSIG request, a login).
    package func allows(namespace: String?) -> Bool {
        namespaces.isEmpty || namespace.map(namespaces.contains) == true
    }

    /// OpenSSH's fingerprint of the blob: the item's account, unique per key in a keychain.
    package var account: String { SSHPublicKey.fingerprint(of: publicBlob) }

    /// The item's attributes (the secret and the access object are the caller's).
    package var attributes: [String: AttributeValue] {
        var record = SSHWriter()
        record.byte(1)  // the record's version
        record.string(publicBlob)
        record.byte(origin.rawValue)
        record.bool(confirm)
        record.bool(inTPM)
        record.uint32(UInt32(namespaces.count))
        for namespace in namespaces { record.text(namespace) }
        return .named([
            .service: .string(Self.service), .account: .string(account), .accessGroup: .string(Self.group),
            .label: .string(comment.isEmpty ? "SSH key \(account)" : comment), .description: .string(Self.kind),
            .generic: .data(Data(record.bytes)),
            .accessible: .string((inTPM ? KeyClass.whenUnlockedThisDeviceOnly : KeyClass.whenUnlocked).rawValue), .synchronizable: .number(0),
        ])
    }

    /// The criteria that find every SSH key item.
    package static var criteria: [String: AttributeValue] { .named([.service: .string(service), .accessGroup: .string(group)]) }

    /// A query for every SSH key item, or the one of `account` (a fingerprint), synchronizable or
    /// not: a key synced from another device is as much the user's.
    package static func query(account: String? = nil) -> ItemQuery {
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = criteria
        if let account { query.criteria[.account] = .string(account) }
        query.matchAnySynchronizable = true
        query.limit = nil
        return query
    }

    /// The key an item's attributes describe; nil for an item that is not one (or is damaged).
    package init?(attributes: [String: AttributeValue]) {
        guard attributes[.service] == .string(Self.service), case .data(let data)? = attributes[.generic] else { return nil }
        var reader = SSHReader(Array(data))
        guard (try? reader.byte()) == 1, let blob = try? reader.string(), let origin = (try? reader.byte()).flatMap(Origin.init),
              let confirm = try? reader.bool(), let inTPM = try? reader.bool(), let count = try? reader.uint32(), count <= 64 else {
            return nil
        }
        var namespaces: [String] = []
        for _ in 0..<count {
            guard let namespace = try? reader.text() else { return nil }
            namespaces.append(namespace)
        }
        guard reader.isAtEnd, attributes[.account] == .string(SSHPublicKey.fingerprint(of: blob)) else { return nil }
        var comment = ""
        if case .string(let label)? = attributes[.label], label != "SSH key \(SSHPublicKey.fingerprint(of: blob))" { comment = label }
        self.init(publicBlob: blob, comment: comment, confirm: confirm, origin: origin, inTPM: inTPM, namespaces: namespaces)
    }
}
