/// Keys kept beyond an agent's life, in a keychain (`keyhaven-ssh-agent --keychain`), as one
/// client connection sees them: the session lists and signs with them beside the keyring's.
///
/// Each call may ask the user (to unlock the keychain, or to let the client's program use a key)
/// and blocks the connection's thread meanwhile.
package protocol SSHKeyVault: Sendable {
    /// The kept keys; empty when the keychain cannot be read and the user did not unlock it.
    func keys() -> [SSHKeyItem]
    /// The signature of `item`'s key over `data`; nil when the keychain or the key's access
    /// object refuses the client, or the user declines.
    func sign(_ item: SSHKeyItem, data: [UInt8], flags: UInt32) -> [UInt8]?
    /// Keeps the key an add request carries (replacing the same key kept before).
    func keep(_ added: AgentRequest.AddedKey, confirm: Bool) throws(SSHAgentError)
    /// Removes the kept key with `blob`, or every key clients added (nil); keys made in the
    /// keychain stay (``SSHKeyItem/Origin/made``). Whether one was removed.
    func remove(blob: [UInt8]?) -> Bool
}
