import CGtk

/// A keychain's password asked in a window of its own: a password entry (accessible name
/// "Password"), OK and Cancel. A wrong password is said in the dialog, which stays open.
@MainActor
final class PasswordDialog {
    private static var open: [PasswordDialog] = []

    let window: UnsafeMutablePointer<GtkWidget>
    let entry: UnsafeMutablePointer<GtkWidget>
    let error: UnsafeMutablePointer<GtkWidget>
    private var callbacks: [Callback] = []
    /// Takes the password; returns the error to show, nil when it was right.
    private let submit: ([UInt8]) -> String?

    /// Shows the dialog over `parent`; `submit` is called with each password entered.
    static func ask(parent: UnsafeMutablePointer<GtkWidget>, title: String, prompt: String, submit: @escaping ([UInt8]) -> String?) {
        let dialog = PasswordDialog(parent: parent, title: title, prompt: prompt, submit: submit)
        open.append(dialog)
        gtk_window_present(kh_window(dialog.window))
    }

    private init(parent: UnsafeMutablePointer<GtkWidget>, title: String, prompt: String, submit: @escaping ([UInt8]) -> String?) {
        self.submit = submit
        window = gtk_window_new()
        gtk_window_set_title(kh_window(window), title)
        gtk_window_set_transient_for(kh_window(window), kh_window(parent))
        gtk_window_set_modal(kh_window(window), 1)
        entry = gtk_password_entry_new()
        kh_set_accessible_label(entry, "Password")
        error = makeLabel("")
        let ok = gtk_button_new_with_label("OK")!
        let cancel = gtk_button_new_with_label("Cancel")!
        let buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
        gtk_box_append(kh_box(buttons), cancel)
        gtk_box_append(kh_box(buttons), ok)
        let box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8)!
        for margin in [gtk_widget_set_margin_top, gtk_widget_set_margin_bottom, gtk_widget_set_margin_start, gtk_widget_set_margin_end] {
            margin(box, 12)
        }
        gtk_box_append(kh_box(box), makeLabel(prompt))
        gtk_box_append(kh_box(box), entry)
        gtk_box_append(kh_box(box), error)
        gtk_box_append(kh_box(box), buttons)
        gtk_window_set_child(kh_window(window), box)
        connect(ok, "clicked") { [unowned self] in enter() }
        connect(entry, "activate") { [unowned self] in enter() }
        connect(cancel, "clicked") { [unowned self] in close() }
    }

    private func enter() {
        // The entry's bytes are copied once (no Swift string, which could not be wiped) and the
        // entry cleared at once.
        let text = gtk_editable_get_text(kh_editable(entry))!
        var password = Array(UnsafeBufferPointer(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text)))
        gtk_editable_set_text(kh_editable(entry), "")
        defer { for index in password.indices { password[index] = 0 } }
        if let message = submit(password) {
            gtk_label_set_text(kh_label(error), message)
            kh_set_accessible_description(entry, message)
        } else {
            close()
        }
    }

    private func close() {
        gtk_window_destroy(kh_window(window))
        Self.open.removeAll { $0 === self }
    }

    private func connect(_ widget: UnsafeMutablePointer<GtkWidget>?, _ signal: String, _ action: @escaping () -> Void) {
        let callback = Callback(action)
        callbacks.append(callback)
        callback.connect(raw(widget), signal)
    }
}
