import CGtk
import FoundationEssentials
import KeychainAccessCore
import KeychainModel

/// An item's window: its attributes (name, account and comment editable), Show Password and
/// Copy Password, its Access Control page and, for a certificate, its details and export. Every
/// change and every secret asks for the keychain's password.
@MainActor
final class ItemWindow {
    private static var open: [ItemWindow] = []

    let window: UnsafeMutablePointer<GtkWidget>
    private unowned let owner: AccessWindow
    private var details: ItemDetails
    private let status: UnsafeMutablePointer<GtkWidget>
    private let name: UnsafeMutablePointer<GtkWidget>
    private let account: UnsafeMutablePointer<GtkWidget>
    private let comment: UnsafeMutablePointer<GtkWidget>
    private let shownPassword: UnsafeMutablePointer<GtkWidget>
    private let showButton: UnsafeMutablePointer<GtkWidget>
    private let everyProgram: UnsafeMutablePointer<GtkWidget>
    private let programList: UnsafeMutablePointer<GtkWidget>
    /// The Access Control page's state until it is saved.
    private var allowsEveryProgram: Bool
    private var programs: [String]
    private var callbacks: [Callback] = []

    static func show(_ details: ItemDetails, in owner: AccessWindow) {
        if let existing = open.first(where: { $0.details.row.id == details.row.id }) {
            gtk_window_present(kh_window(existing.window))
            return
        }
        let item = ItemWindow(details, owner: owner)
        open.append(item)
        gtk_window_present(kh_window(item.window))
    }

    private init(_ details: ItemDetails, owner: AccessWindow) {
        self.details = details
        self.owner = owner
        allowsEveryProgram = details.allowsEveryProgram
        programs = details.trustedPrograms
        window = gtk_window_new()
        gtk_window_set_title(kh_window(window), details.label)
        gtk_window_set_transient_for(kh_window(window), kh_window(owner.window))
        gtk_window_set_default_size(kh_window(window), 620, 460)
        status = makeLabel("")
        gtk_label_set_wrap(kh_label(status), 1)
        kh_set_accessible_label(status, "Status")

        // Attributes.
        let grid = gtk_grid_new()!
        gtk_grid_set_row_spacing(kh_grid(grid), 6)
        gtk_grid_set_column_spacing(kh_grid(grid), 8)
        name = ItemWindow.entry("Name", details.label)
        account = ItemWindow.entry("Account", details.account)
        comment = ItemWindow.entry("Comment", details.comment)
        var line: Int32 = 0
        func attach(_ label: String, _ widget: UnsafeMutablePointer<GtkWidget>) {
            gtk_grid_attach(kh_grid(grid), makeLabel(label), 0, line, 1, 1)
            gtk_grid_attach(kh_grid(grid), widget, 1, line, 1, 1)
            line += 1
        }
        attach("Name", name)
        if details.hasPassword { attach("Account", account) }
        attach("Comment", comment)
        for (fact, value) in details.facts {
            let text = makeLabel(value)
            gtk_label_set_selectable(kh_label(text), 1)
            kh_set_accessible_label(text, fact)
            attach(fact, text)
        }
        shownPassword = makeLabel("")
        gtk_label_set_selectable(kh_label(shownPassword), 1)
        kh_set_accessible_label(shownPassword, "Shown Password")
        showButton = gtk_button_new_with_label("Show Password")
        kh_set_accessible_label(showButton, "Show Password")
        let copy = gtk_button_new_with_label("Copy Password")!
        kh_set_accessible_label(copy, "Copy Password")
        let save = gtk_button_new_with_label("Save Changes")!
        kh_set_accessible_label(save, "Save Changes")
        if details.hasPassword {
            attach("Password", shownPassword)
            let buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
            gtk_box_append(kh_box(buttons), showButton)
            gtk_box_append(kh_box(buttons), copy)
            gtk_grid_attach(kh_grid(grid), buttons, 1, line, 1, 1)
            line += 1
        }
        gtk_grid_attach(kh_grid(grid), save, 1, line, 1, 1)

        // Access Control.
        // Grouped toggle buttons (one of the two is on): GTK 4.8 gives check buttons no action
        // that assistive technology can call.
        everyProgram = gtk_toggle_button_new_with_label("Allow all programs to access this item")
        kh_set_accessible_label(everyProgram, "Allow all programs to access this item")
        let confirm = gtk_toggle_button_new_with_label("Confirm before allowing access")!
        kh_set_accessible_label(confirm, "Confirm before allowing access")
        gtk_toggle_button_set_group(kh_toggle(confirm), kh_toggle(everyProgram))
        gtk_toggle_button_set_active(kh_toggle(details.allowsEveryProgram ? everyProgram : confirm), 1)
        let choice = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 0)!
        gtk_widget_add_css_class(choice, "linked")
        gtk_box_append(kh_box(choice), everyProgram)
        gtk_box_append(kh_box(choice), confirm)
        programList = gtk_list_box_new()
        kh_set_accessible_label(programList, "Trusted Programs")
        let add = gtk_button_new_with_label("Add…")!
        kh_set_accessible_label(add, "Add Program")
        let remove = gtk_button_new_with_label("Remove")!
        kh_set_accessible_label(remove, "Remove Program")
        let saveAccess = gtk_button_new_with_label("Save Access Control")!
        kh_set_accessible_label(saveAccess, "Save Access Control")
        let accessButtons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
        for button in [add, remove, saveAccess] { gtk_box_append(kh_box(accessButtons), button) }
        let access = ItemWindow.page([choice, makeLabel("Always allow access by these programs:"), programList, accessButtons])

        let notebook = gtk_notebook_new()!
        gtk_notebook_append_page(kh_notebook(notebook), ItemWindow.page([grid]), makeLabel("Attributes"))
        gtk_notebook_append_page(kh_notebook(notebook), access, makeLabel("Access Control"))
        if details.row.itemClass == .certificate { gtk_notebook_append_page(kh_notebook(notebook), certificatePage(), makeLabel("Certificate")) }
        let close = gtk_button_new_with_label("Close")!
        kh_set_accessible_label(close, "Close")
        gtk_widget_set_halign(close, GTK_ALIGN_END)
        let box = ItemWindow.page([notebook, status, close])
        gtk_widget_set_vexpand(notebook, 1)
        gtk_window_set_child(kh_window(window), box)
        drawPrograms()

        connect(window, "destroy") { [unowned self] in Self.open.removeAll { $0 === self } }
        connect(close, "clicked") { [unowned self] in
            gtk_window_destroy(kh_window(window))
            gtk_window_present(kh_window(owner.window))
        }
        connect(showButton, "clicked") { [unowned self] in togglePassword() }
        connect(copy, "clicked") { [unowned self] in copyPassword() }
        connect(save, "clicked") { [unowned self] in saveAttributes() }
        connect(everyProgram, "toggled") { [unowned self] in allowsEveryProgram = gtk_toggle_button_get_active(kh_toggle(everyProgram)) != 0 }
        connect(add, "clicked") { [unowned self] in chooseProgram() }
        connect(remove, "clicked") { [unowned self] in
            guard let selected = gtk_list_box_get_selected_row(kh_list_box(programList)) else { return }
            programs.remove(at: Int(gtk_list_box_row_get_index(selected)))
            drawPrograms()
        }
        connect(saveAccess, "clicked") { [unowned self] in saveAccessControl() }
    }

    private func certificatePage() -> UnsafeMutablePointer<GtkWidget> {
        let grid = gtk_grid_new()!
        gtk_grid_set_row_spacing(kh_grid(grid), 6)
        gtk_grid_set_column_spacing(kh_grid(grid), 8)
        guard let session = owner.model.session, let info = try? session.certificate(details.row) else {
            return ItemWindow.page([makeLabel("The certificate cannot be read.")])
        }
        let facts: [(String, String)] = [
            ("Subject", info.subjectName), ("Issuer", info.issuerName),
            ("Serial Number", info.serialNumber.map { ($0 < 16 ? "0" : "") + String($0, radix: 16, uppercase: true) }.joined(separator: " ")),
            ("Not Valid Before", ItemBrowser.text(date: info.notValidBefore)), ("Not Valid After", ItemBrowser.text(date: info.notValidAfter)),
            ("Key Usage", info.keyUsageNames.isEmpty ? "--" : info.keyUsageNames.joined(separator: ", ")),
            ("Extended Key Usage", info.extendedKeyUsageNames.isEmpty ? "--" : info.extendedKeyUsageNames.joined(separator: ", ")),
            ("SHA-256 Fingerprint", info.sha256Fingerprint), ("SHA-1 Fingerprint", info.sha1Fingerprint),
        ]
        for (index, (fact, value)) in facts.enumerated() {
            let text = makeLabel(value)
            gtk_label_set_selectable(kh_label(text), 1)
            gtk_label_set_wrap(kh_label(text), 1)
            gtk_label_set_wrap_mode(kh_label(text), PANGO_WRAP_CHAR)
            kh_set_accessible_label(text, fact)
            gtk_grid_attach(kh_grid(grid), makeLabel(fact), 0, Int32(index), 1, 1)
            gtk_grid_attach(kh_grid(grid), text, 1, Int32(index), 1, 1)
        }
        let pem = gtk_button_new_with_label("Export PEM…")!
        kh_set_accessible_label(pem, "Export PEM")
        let buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
        gtk_box_append(kh_box(buttons), pem)
        connect(pem, "clicked") { [unowned self] in exportPEM() }
        if details.row.hasPrivateKey {
            let pkcs12 = gtk_button_new_with_label("Export PKCS#12…")!
            kh_set_accessible_label(pkcs12, "Export PKCS#12")
            gtk_box_append(kh_box(buttons), pkcs12)
            connect(pkcs12, "clicked") { [unowned self] in exportPKCS12() }
        }
        return ItemWindow.page([grid, buttons])
    }

    // MARK: What the buttons do

    private func togglePassword() {
        if !String(cString: gtk_label_get_text(kh_label(shownPassword))).isEmpty {
            gtk_label_set_text(kh_label(shownPassword), "")
            setShowTitle("Show Password")
            return
        }
        let row = details.row
        owner.withKeychainPassword(row, over: window, title: "Show Password", prompt: "Show the password of \"\(row.name)\".", action: "Show") { [unowned self] session, _, password throws(StoreError) in
            var secret = try session.reveal(row, password: password)
            defer { secret.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
            var text = secret.map { CChar(bitPattern: $0) } + [0]
            gtk_label_set_text(kh_label(shownPassword), text)
            text.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
            setShowTitle("Hide Password")
        }
    }

    private func setShowTitle(_ title: String) {
        gtk_button_set_label(kh_button(showButton), title)
        kh_set_accessible_label(showButton, title)
    }

    private func copyPassword() {
        owner.copyPassword(of: details.row, over: window) { [unowned self] in
            say("The password is on the clipboard for \(owner.clipboard.seconds) seconds.")
        }
    }

    private func saveAttributes() {
        let row = details.row
        let (label, account, comment) = (text(name), text(account), text(comment))
        owner.withKeychainPassword(row, over: window, title: "Save Changes", prompt: "Save the changes to \"\(row.name)\".", action: "Save") { [unowned self] session, _, password throws(StoreError) in
            try session.update(row, label: label, account: account, comment: comment, password: password)
            gtk_window_set_title(kh_window(window), label)
            say("Saved.")
        }
    }

    private func chooseProgram() {
        let chooser = kh_open_file_chooser(window, "Choose a Program")!
        let callback = Callback {}
        callbacks.append(callback)
        kh_connect_response(UnsafeMutableRawPointer(chooser), { dialog, response, data in
            guard let dialog, let data else { return }
            MainActor.assumeIsolated {
                let window = Unmanaged<ItemWindow>.fromOpaque(data).takeUnretainedValue()
                if response == GTK_RESPONSE_ACCEPT.rawValue, let path = kh_file_chooser_path(kh_widget(UnsafeMutableRawPointer(dialog))) {
                    window.addProgram(String(cString: path))
                    g_free(path)
                }
                gtk_window_destroy(kh_window(kh_widget(UnsafeMutableRawPointer(dialog))))
            }
        }, Unmanaged.passUnretained(self).toOpaque())
        gtk_window_set_modal(kh_window(chooser), 1)
        gtk_window_present(kh_window(chooser))
    }

    private func addProgram(_ path: String) {
        guard !programs.contains(path) else { return }
        programs.append(path)
        programs.sort()
        drawPrograms()
    }

    private func saveAccessControl() {
        let row = details.row
        let change = details.accessChange(allowsEveryProgram: allowsEveryProgram, programs: programs)
        owner.withKeychainPassword(row, over: window, title: "Save Access Control", prompt: "Change which programs may use \"\(row.name)\".",
                                   action: "Save") { [unowned self] session, _, password throws(StoreError) in
            try session.setAccess(row, change, password: password)
            details = ItemDetails(try session.item(row), keychainPath: row.keychainPath, hasPrivateKey: row.hasPrivateKey)
            programs = details.trustedPrograms
            drawPrograms()
            say("Access control saved.")
        }
    }

    private func exportPEM() {
        let row = details.row
        FormDialog.ask(parent: window, title: "Export Certificate", prompt: "Export \"\(row.name)\" as PEM to a new file.",
                       fields: [.text("File", initial: ItemWindow.exportPath(row.name, "pem"))], action: "Export") { [unowned self] values in
            guard let session = owner.model.session else { return "The keychain agent is not reachable." }
            do throws(StoreError) {
                try ItemWindow.write(try session.exportPEM(row), to: values.text("File"))
            } catch {
                return KeychainAccessModel.say(error)
            }
            say("Exported to \(values.text("File")).")
            return nil
        }
    }

    private func exportPKCS12() {
        let row = details.row
        owner.withKeychainPassword(row, over: window, title: "Export Identity", prompt: "Export \"\(row.name)\" with its private key as PKCS#12.",
                                   action: "Export", fields: [.text("File", initial: ItemWindow.exportPath(row.name, "p12")),
                                                              .password("Passphrase"), .password("Verify Passphrase")]) { [unowned self] session, values, password throws(StoreError) in
            guard values.password("Passphrase") == values.password("Verify Passphrase") else {
                throw StoreError(.invalidParameter, "The passphrases do not match.")
            }
            var bytes = try session.exportPKCS12(row, keychainPassword: password, passphrase: values.password("Passphrase"))
            defer { bytes.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
            try ItemWindow.write(bytes, to: values.text("File"))
            say("Exported to \(values.text("File")).")
        }
    }

    // MARK: Helpers

    private func drawPrograms() {
        while let row = gtk_list_box_get_row_at_index(kh_list_box(programList), 0) {
            gtk_list_box_remove(kh_list_box(programList), kh_widget(UnsafeMutableRawPointer(row)))
        }
        for program in programs {
            let label = makeLabel(program)
            kh_set_accessible_label(label, program)
            gtk_list_box_append(kh_list_box(programList), label)
        }
    }

    private func say(_ text: String) {
        gtk_label_set_text(kh_label(status), text)
    }

    private func text(_ entry: UnsafeMutablePointer<GtkWidget>) -> String { String(cString: gtk_editable_get_text(kh_editable(entry))) }

    private func connect(_ widget: UnsafeMutablePointer<GtkWidget>?, _ signal: String, _ action: @escaping () -> Void) {
        let callback = Callback(action)
        callbacks.append(callback)
        callback.connect(raw(widget), signal)
    }

    private static func entry(_ name: String, _ value: String) -> UnsafeMutablePointer<GtkWidget> {
        let entry = gtk_entry_new()!
        gtk_editable_set_text(kh_editable(entry), value)
        gtk_widget_set_hexpand(entry, 1)
        kh_set_accessible_label(entry, name)
        return entry
    }

    private static func page(_ children: [UnsafeMutablePointer<GtkWidget>]) -> UnsafeMutablePointer<GtkWidget> {
        let box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8)!
        for margin in [gtk_widget_set_margin_top, gtk_widget_set_margin_bottom, gtk_widget_set_margin_start, gtk_widget_set_margin_end] {
            margin(box, 12)
        }
        for child in children { gtk_box_append(kh_box(box), child) }
        return box
    }

    /// A new file in the user's home named after the item.
    private static func exportPath(_ name: String, _ ending: String) -> String {
        let home = ProcessInfo.processInfo.environment["HOME"] ?? "/tmp"
        let safe = String(name.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_" }.prefix(64))
        return home + "/" + (safe.isEmpty ? "export" : safe) + "." + ending
    }

    /// Writes a new file (0600; an existing file is never replaced).
    private static func write(_ bytes: [UInt8], to path: String) throws(StoreError) {
        guard path.hasPrefix("/") else { throw StoreError(.invalidParameter, "Give the file's full path, from /.") }
        guard try FileSecurity.createExclusively(path, bytes: bytes) else { throw StoreError(.duplicateItem, "\(path) exists; choose another name.") }
    }
}
