import CGtk
import KeychainAccessCore
import KeychainModel

/// The item commands: New Password Item, Delete, Copy Password, Get Info.
extension AccessWindow {
    /// The keychain `row` is in, as the sidebar lists it.
    func keychain(of row: ItemRow) -> KeychainEntry? { model.keychains.first { $0.path == row.keychainPath } }

    /// Asks for the keychain's password (when it has one) and any `fields`, then runs `work`
    /// with the answers and the password; its error is said in the dialog.
    /// `over`: the window the dialog belongs to (the item's window; default: this one).
    func withKeychainPassword(_ row: ItemRow, over: UnsafeMutablePointer<GtkWidget>? = nil, title: String, prompt: String, action: String,
                              fields: [FormField] = [], _ work: @escaping (KeychainAccessSession, FormValues, [UInt8]) throws(StoreError) -> Void) {
        guard let keychain = keychain(of: row) else { return }
        let note = keychain.hasPassword ? " Enter the password of the keychain \"\(keychain.name)\"."
                                        : " The keychain \"\(keychain.name)\" has no password: any program you run can read its file."
        FormDialog.ask(parent: over ?? window, title: title, prompt: prompt + note, fields: (keychain.hasPassword ? [.password("Keychain Password")] : []) + fields,
                       action: action) { [unowned self] values in
            guard let session = model.session else { return "The keychain agent is not reachable." }
            do throws(StoreError) {
                try work(session, values, values.password("Keychain Password"))
            } catch {
                return KeychainAccessModel.say(error)
            }
            model.refresh()
            report(nil)
            return nil
        }
    }

    func newPasswordItem() {
        guard let keychain = model.selectedKeychain, keychain.isUnlocked else {
            report("Unlock the keychain to add an item to it.")
            return
        }
        let dialog = FormDialog.ask(parent: window, title: "New Password Item",
                                    prompt: "A password for a website (its URL) or for a program or service (its name), kept in \"\(keychain.name)\".",
                                    fields: [.text("Item Name"), .text("Account Name"), .password("Password")], action: "Add") { [unowned self] values in
            guard let session = model.session else { return "The keychain agent is not reachable." }
            do throws(StoreError) {
                _ = try session.addPassword(to: keychain.path, name: values.text("Item Name"), account: values.text("Account Name"),
                                            password: values.password("Password"))
            } catch {
                return KeychainAccessModel.say(error)
            }
            model.refresh()
            report(nil)
            return nil
        }
        StrengthMeter.attach(to: dialog)
    }

    func deleteSelectedItem() {
        guard let row = items.selected else { return }
        withKeychainPassword(row, title: "Delete Item", prompt: "Delete \"\(row.name)\"? This cannot be undone.", action: "Delete") { session, _, password throws(StoreError) in
            try session.delete(row, password: password)
        }
    }

    func copySelectedPassword() {
        guard let row = items.selected, row.itemClass.isPassword else { return }
        copyPassword(of: row)
    }

    /// Asks for the keychain's password, puts `row`'s password on the clipboard (``ClipboardGuard``
    /// takes it away again), then runs `copied`.
    func copyPassword(of row: ItemRow, over: UnsafeMutablePointer<GtkWidget>? = nil, copied: @escaping () -> Void = {}) {
        withKeychainPassword(row, over: over, title: "Copy Password",
                             prompt: "Copy the password of \"\(row.name)\" to the clipboard (cleared after \(clipboard.seconds) seconds).",
                             action: "Copy") { [unowned self] session, _, password throws(StoreError) in
            var secret = try session.reveal(row, password: password)
            defer { secret.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
            clipboard.copy(secret)
            copied()
        }
    }

    func openItem(_ row: ItemRow) {
        guard let session = model.session else { return }
        do throws(StoreError) {
            ItemWindow.show(ItemDetails(try session.item(row), keychainPath: row.keychainPath, hasPrivateKey: row.hasPrivateKey), in: self)
        } catch {
            report(KeychainAccessModel.say(error))
        }
    }
}
