import KeychainModel

/// Everything the window shows, and what its controls do, without GTK: the keychains, the one
/// selected, its rows as the browser shows them, and a message when something failed. The
/// window calls ``refresh()`` every second, so items another program adds or deletes appear or
/// go, and a lost agent is reconnected once it is back.
package final class KeychainAccessModel {
    package private(set) var keychains: [KeychainEntry] = []
    package private(set) var selected: String?
    package private(set) var rows: [ItemRow] = []
    package var browser = ItemBrowser()
    /// What the window says above the list: an error, or nil.
    package private(set) var message: String?
    /// The agent session while the agent answers; nil after it failed, until the next refresh.
    package private(set) var session: KeychainAccessSession?
    private let connect: () throws(StoreError) -> KeychainAccessSession

    package init(connect: @escaping () throws(StoreError) -> KeychainAccessSession = KeychainAccessSession.open) {
        self.connect = connect
    }

    /// The rows shown now.
    package var shown: [ItemRow] { browser.shown(rows) }

    /// The selected keychain's entry.
    package var selectedKeychain: KeychainEntry? { keychains.first { $0.path == selected } }

    /// Reads the keychains and the selected one's items again; says so when the agent is gone.
    package func refresh() {
        do throws(StoreError) {
            let session: KeychainAccessSession
            if let existing = self.session { session = existing } else { session = try connect() }
            self.session = session
            keychains = try session.keychains()
            if selected == nil || !keychains.contains(where: { $0.path == selected }) { selected = keychains.first?.path }
            if let selected { rows = try session.rows(in: selected) } else { rows = [] }
            message = nil
        } catch where error.code == .notAvailable || error.code == .wrongVersion {
            session = nil
            message = "The keychain agent is not reachable (\(error.message)). Keychain Access reconnects when it is back."
        } catch {
            message = Self.say(error)
        }
    }

    package func select(_ path: String) {
        selected = path
        refresh()
    }

    /// Locks the selected keychain.
    package func lockSelected() {
        guard let session, let selected else { return }
        do { try session.lock(selected) } catch { message = error.message }
        refresh()
    }

    /// Unlocks the selected keychain; the error to show in the dialog, nil when it opened.
    package func unlockSelected(password: [UInt8]) -> String? {
        perform { (session, keychain) throws(StoreError) in try session.unlock(keychain, password: password) }
    }

    /// Runs `work` on the session and the selected keychain, then reads everything again; the
    /// error to show (in words a person reads), nil when it succeeded.
    package func perform(_ work: (KeychainAccessSession, String) throws(StoreError) -> Void) -> String? {
        guard let session else { return message ?? "The keychain agent is not reachable." }
        guard let selected else { return "No keychain is selected." }
        defer { refresh() }
        do throws(StoreError) {
            try work(session, selected)
            return nil
        } catch {
            return Self.say(error)
        }
    }

    /// An error as the window says it.
    package static func say(_ error: StoreError) -> String {
        switch error.code {
        case .authFailed: return "The password is not this keychain's."
        case .interactionNotAllowed: return "The keychain is locked."
        default:
            let text = error.message
            return text.prefix(1).uppercased() + text.dropFirst() + (text.hasSuffix(".") ? "" : ".")
        }
    }
}
