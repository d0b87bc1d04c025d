#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import ArgumentParser
import FoundationEssentials
import KeychainModel
import KeyhavenAgentClient
import KeyhavenCLI
import KeyhavenSSHAgent

/// `keyhaven ssh`'s work: SSH key items (``SSHKeyItem``) made, listed and deleted through the agent.
enum SSHKeys {
    static let caller = Caller(accessGroups: [SSHKeyItem.group])

    /// The kept keys of `keychain`, with their items' attributes.
    static func kept(in keychain: String, _ session: Session) throws(StoreError)
        -> [(item: SSHKeyItem, attributes: [String: AttributeValue], flags: UInt64?)] {
        try session.items(matching: SSHKeyItem.query(), in: keychain, caller: caller, withSecrets: false).compactMap { stored in
            SSHKeyItem(attributes: stored.attributes).map { ($0, stored.attributes, stored.accessControlFlags) }
        }
    }

    /// The type's name in a public blob.
    static func typeName(_ blob: [UInt8]) -> String {
        var reader = SSHReader(blob)
        return (try? reader.text()) ?? "?"
    }

    /// The OpenSSH public key line of a blob.
    static func publicLine(_ blob: [UInt8], comment: String) -> String {
        "\(typeName(blob)) \(Data(blob).base64EncodedString()) \(comment)"
    }
}

extension SSHNewKey: HelperWork {
    package func work() throws {
        try perform("ssh new-key") { () throws(StoreError) in
            let programs = ["ssh", "ssh-keygen"].compactMap(programOnPath)
            guard !programs.isEmpty else {
                throw StoreError(.invalidParameter, "OpenSSH's ssh and ssh-keygen are not on PATH: no program could use the key")
            }
            let session = try Session.open()
            var (publicBlob, secret) = tpm ? try tpmKey(session) : try softwareKey()
            defer { zeroize(&secret) }
            var data = Data(secret)
            defer { data.resetBytes(in: 0..<data.count) }
            let item = SSHKeyItem(publicBlob: publicBlob, comment: name, confirm: confirm, origin: .made, inTPM: tpm, namespaces: namespaces)
            // The agent hashes each path (unresolved applications), as for security(1)'s -T.
            let access = ItemAccess(applications: programs.map { TrustedApplication(path: $0, digest: Data()) })
            // kSecAccessControlUserPresence (1 << 0): each signature needs a finger or the keychain's password.
            let flags: UInt64? = presence ? 1 << 0 : nil
            var attributes = item.attributes
            if sync { attributes[.synchronizable] = .number(1) }
            try session.send(.add(keychain: try session.path(keychain), item: NewItem(itemClass: .genericPassword, attributes: attributes,
                                                                                      secret: data, accessControlFlags: flags, access: access),
                                  caller: SSHKeys.caller))
            printLine(SSHKeys.publicLine(publicBlob, comment: name))
        }
    }

    /// A key made here by swift-crypto: its public blob and its private key's stored encoding.
    private func softwareKey() throws(StoreError) -> ([UInt8], [UInt8]) {
        do throws(SSHAgentError) {
            let made = try SSHKeyGenerator.generate(SSHKeyGenerator.KeyType(rawValue: keyType)!, bits: bits)
            return (try SSHSigningKey(made.fields).publicBlob, made.fields.encoded(keyType: made.keyType))
        } catch {
            throw StoreError(.invalidParameter, error.message)
        }
    }

    /// A P-256 key made inside the TPM by the agent: its public blob, and the wrapped key with its
    /// authorization (what only this machine's TPM can use).
    private func tpmKey(_ session: Session) throws(StoreError) -> ([UInt8], [UInt8]) {
        let key = try session.send(.createEnclaveKey).enclaveKey()
        var blob = SSHWriter()
        blob.text("ecdsa-sha2-nistp256")
        blob.text("nistp256")
        blob.string(key.publicKey)
        return (blob.bytes, key.wireBytes)
    }
}

extension SSHList: HelperWork {
    package func work() throws {
        try perform("ssh list") { () throws(StoreError) in
            let session = try Session.open()
            let uses = (try? session.send(.sshUses(revoke: nil)).sshUses().lastUses) ?? []
            for keychain in try session.searchPaths(keychains) {
                for (item, attributes, flags) in try SSHKeys.kept(in: keychain, session) {
                    let lastUse = uses.first { $0.key == item.account }.map { use in
                        SSHUseReport.oneLine("\(use.at.formatted(.iso8601)) by \(use.by) to \(use.target) (\(use.allowed))")
                    } ?? "-"
                    var constraints: [String] = []
                    if item.confirm { constraints.append("confirm each use") }
                    if flags.map({ $0 & 1 != 0 }) == true { constraints.append("a finger or the password at each use") }
                    if !item.namespaces.isEmpty { constraints.append("signs in " + item.namespaces.joined(separator: ", ") + " only") }
                    let origin = item.inTPM ? "in the TPM, never synced" : item.origin == .made ? "made in the keychain" : "added by ssh-add"
                    let synced = item.inTPM ? "" : attributes[.synchronizable] == .number(1) ? ", synchronizable" : ", this device only"
                    printLine("\(item.comment.isEmpty ? "(no name)" : item.comment)\t\(SSHKeys.typeName(item.publicBlob))\t\(item.account)\t"
                              + "keychain \(keychain) (\(origin)\(synced))\t\(constraints.isEmpty ? "-" : constraints.joined(separator: ", "))\t\(lastUse)")
                }
            }
        }
    }
}

extension SSHDelete: HelperWork {
    package func work() throws {
        try perform("ssh delete") { () throws(StoreError) in
            let session = try Session.open()
            let path = try session.path(keychain)
            let matches = try SSHKeys.kept(in: path, session).filter { $0.item.account == key || $0.item.comment == key }
            guard !matches.isEmpty else { throw StoreError(.itemNotFound, "no SSH key named \(key) in \(path)") }
            guard matches.count == 1 else {
                throw StoreError(.duplicateItem, "\(matches.count) SSH keys are named \(key): name one by its fingerprint")
            }
            let query = SSHKeyItem.query(account: matches[0].item.account)
            try session.send(.delete(keychains: [path], query: query, caller: SSHKeys.caller, makeTombstones: true))
        }
    }
}
