import CGtk
import KeychainAccessCore

/// The SSH Keys page: the keys kept in the keychains with their last uses (list "SSH Keys"), and
/// the approvals given at confirming keys' prompts (list "Approvals"), each with its Revoke
/// button ("Revoke approval N"), and Revoke All. What it shows comes from ``SSHKeysSummary``.
@MainActor
final class SSHKeysWindow {
    private static var current: SSHKeysWindow?

    let window: UnsafeMutablePointer<GtkWidget>
    private let model: KeychainAccessModel
    private let keys: UnsafeMutablePointer<GtkWidget>
    private let approvals: UnsafeMutablePointer<GtkWidget>
    private let revokeAll: UnsafeMutablePointer<GtkWidget>
    private let message: UnsafeMutablePointer<GtkWidget>
    private var callbacks: [Callback] = []
    private var rowCallbacks: [Callback] = []

    static func show(parent: UnsafeMutablePointer<GtkWidget>, model: KeychainAccessModel) {
        if let current {
            current.reload()
            gtk_window_present(kh_window(current.window))
            return
        }
        let page = SSHKeysWindow(parent: parent, model: model)
        current = page
        page.reload()
        gtk_window_present(kh_window(page.window))
    }

    private init(parent: UnsafeMutablePointer<GtkWidget>, model: KeychainAccessModel) {
        self.model = model
        keys = gtk_list_box_new()
        kh_set_accessible_label(keys, "SSH Keys")
        approvals = gtk_list_box_new()
        kh_set_accessible_label(approvals, "Approvals")
        revokeAll = gtk_button_new_with_label("Revoke All")
        kh_set_accessible_label(revokeAll, "Revoke All")
        gtk_widget_set_halign(revokeAll, GTK_ALIGN_START)
        message = makeLabel("")
        gtk_label_set_wrap(kh_label(message), 1)
        let note = makeLabel("Last uses and approvals are the agent's record since it started. An approval spares the prompt of a key that confirms each use.")
        gtk_label_set_wrap(kh_label(note), 1)
        let page = PageWindow(title: "SSH Keys", parent: parent, width: 760, height: 420,
                              children: [makeLabel("Keys"), keys, makeLabel("Approvals"), approvals, revokeAll, note, message]) {
            SSHKeysWindow.current = nil
        }
        window = page.window
        callbacks = page.callbacks
        let all = Callback { [unowned self] in reload(saying: model.revokeSSHApproval(nil)) }
        callbacks.append(all)
        all.connect(raw(revokeAll), "clicked")
    }

    private func reload(saying error: String? = nil) {
        clear(keys)
        clear(approvals)
        rowCallbacks.removeAll()
        let (summary, said) = model.sshPage()
        gtk_label_set_text(kh_label(message), error ?? said)
        for key in summary?.keys ?? [] {
            let label = makeLabel(key.line)
            gtk_label_set_wrap(kh_label(label), 1)
            kh_set_accessible_label(label, key.line)
            gtk_list_box_append(kh_list_box(keys), label)
        }
        for approval in summary?.approvals ?? [] {
            let row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8)!
            let label = makeLabel(approval.line)
            kh_set_accessible_label(label, approval.line)
            gtk_widget_set_hexpand(label, 1)
            let button = gtk_button_new_with_label("Revoke")!
            kh_set_accessible_label(button, "Revoke approval \(approval.id)")
            gtk_box_append(kh_box(row), label)
            gtk_box_append(kh_box(row), button)
            gtk_list_box_append(kh_list_box(approvals), row)
            let id = approval.id
            let clicked = Callback { [unowned self] in reload(saying: model.revokeSSHApproval(id)) }
            rowCallbacks.append(clicked)
            clicked.connect(raw(button), "clicked")
        }
        gtk_widget_set_sensitive(revokeAll, (summary?.approvals.isEmpty ?? true) ? 0 : 1)
    }

    private func clear(_ list: UnsafeMutablePointer<GtkWidget>) {
        while let row = gtk_list_box_get_row_at_index(kh_list_box(list), 0) {
            gtk_list_box_remove(kh_list_box(list), kh_widget(UnsafeMutableRawPointer(row)))
        }
    }
}
