import CGtk
import KeychainAccessCore

/// The keychain commands under the keychains: each asks in a dialog, and the model does it.
extension AccessWindow {
    func newKeychain() {
        FormDialog.ask(parent: window, title: "New Keychain",
                       prompt: "Name the keychain and give it a password. An empty password leaves it unprotected: any program you run can then read its file.",
                       fields: [.text("Keychain Name"), .password("Password"), .password("Verify")], action: "Create") { [unowned self] values in
            let error = model.newKeychain(named: values.text("Keychain Name"), password: values.password("Password"),
                                          confirmation: values.password("Verify"))
            report(nil)
            return error
        }
    }

    func deleteKeychain() {
        guard let keychain = model.selectedKeychain else { return }
        FormDialog.ask(parent: window, title: "Delete Keychain",
                       prompt: "Delete the keychain \"\(keychain.name)\" and every item in it? This cannot be undone.",
                       fields: [], action: "Delete") { [unowned self] _ in
            let error = model.deleteSelectedKeychain()
            report(nil)
            return error
        }
    }

    func makeDefault() {
        report(model.makeSelectedDefault())
    }

    func changePassword() {
        guard let keychain = model.selectedKeychain else { return }
        let fields: [FormField] = (keychain.hasPassword ? [.password("Current Password")] : []) + [.password("New Password"), .password("Verify")]
        FormDialog.ask(parent: window, title: "Change Keychain Password",
                       prompt: "Change the password of the keychain \"\(keychain.name)\". An empty new password removes it.",
                       fields: fields, action: "Change") { [unowned self] values in
            let error = model.changeSelectedPassword(old: values.password("Current Password"), new: values.password("New Password"),
                                                     confirmation: values.password("Verify"))
            report(nil)
            return error
        }
    }

    func changeSettings() {
        guard let keychain = model.selectedKeychain, let settings = model.selectedSettings() else {
            report("The keychain's settings cannot be read while the agent is away.")
            return
        }
        let minutes = max(1, Int(settings.lockInterval / 60))
        FormDialog.ask(parent: window, title: "Keychain Settings", prompt: "Settings of the keychain \"\(keychain.name)\".",
                       fields: [.check("Lock after inactivity", initial: settings.useLockInterval),
                                .number("Minutes of inactivity", initial: minutes, range: 1...1_440),
                                .check("Lock when the screen locks or the system sleeps", initial: settings.lockOnSleep)],
                       action: "Save") { [unowned self] values in
            let error = model.setSelectedSettings(lockAfterMinutes: values.checks["Lock after inactivity"] == true ? values.numbers["Minutes of inactivity"] : nil,
                                                  lockOnSleep: values.checks["Lock when the screen locks or the system sleeps"] == true)
            report(nil)
            return error
        }
    }
}
