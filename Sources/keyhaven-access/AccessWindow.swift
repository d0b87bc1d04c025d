import CGtk
import KeychainAccessCore

/// The main window: the keychains (with their commands) and categories on the left, the search
/// and the items on the right, Lock or Unlock and the item commands in the header. What it shows
/// comes from ``KeychainAccessModel``.
@MainActor
final class AccessWindow {
    static var current: AccessWindow?

    let model = KeychainAccessModel()
    let window: UnsafeMutablePointer<GtkWidget>
    let keychainList: UnsafeMutablePointer<GtkWidget>
    let categoryList: UnsafeMutablePointer<GtkWidget>
    let search: UnsafeMutablePointer<GtkWidget>
    let message: UnsafeMutablePointer<GtkWidget>
    let lockButton: UnsafeMutablePointer<GtkWidget>
    let items: ItemsTable
    let clipboard = ClipboardGuard()
    private var callbacks: [Callback] = []
    private var shownKeychains: [KeychainEntry] = []
    /// A message of the window's own (a command's failure), shown until the next command.
    var notice: String?

    init(onClose: @escaping () -> Void) {
        window = gtk_window_new()
        gtk_window_set_title(kh_window(window), "Keychain Access")
        gtk_window_set_default_size(kh_window(window), 1020, 640)
        let header = gtk_header_bar_new()!
        gtk_window_set_titlebar(kh_window(window), header)
        lockButton = gtk_button_new_with_label("Unlock")
        kh_set_accessible_label(lockButton, "Unlock")
        gtk_header_bar_pack_start(kh_header_bar(header), lockButton)
        let newItem = iconButton("list-add-symbolic", "New Password Item")
        let deleteItem = iconButton("list-remove-symbolic", "Delete")
        let info = iconButton("dialog-information-symbolic", "Get Info")
        let copy = iconButton("edit-copy-symbolic", "Copy Password")
        for button in [newItem, deleteItem, info, copy] { gtk_header_bar_pack_start(kh_header_bar(header), button) }
        let sync = gtk_button_new_with_label("Sync")!
        kh_set_accessible_label(sync, "Sync")
        gtk_header_bar_pack_end(kh_header_bar(header), sync)
        let ssh = gtk_button_new_with_label("SSH Keys")!
        kh_set_accessible_label(ssh, "SSH Keys")
        gtk_header_bar_pack_end(kh_header_bar(header), ssh)

        keychainList = gtk_list_box_new()
        kh_set_accessible_label(keychainList, "Keychains")
        categoryList = gtk_list_box_new()
        kh_set_accessible_label(categoryList, "Category")
        for category in ItemCategory.allCases {
            gtk_list_box_append(kh_list_box(categoryList), makeLabel(category.rawValue))
        }
        let keychainCommands = gtk_flow_box_new()!
        gtk_flow_box_set_selection_mode(kh_flow_box(keychainCommands), GTK_SELECTION_NONE)
        let commands: [(String, String, (AccessWindow) -> () -> Void)] = [
            ("New…", "New Keychain", AccessWindow.newKeychain), ("Delete…", "Delete Keychain", AccessWindow.deleteKeychain),
            ("Default", "Make Default", AccessWindow.makeDefault), ("Password…", "Change Password", AccessWindow.changePassword),
            ("Settings…", "Change Settings", AccessWindow.changeSettings),
        ]
        let sidebar = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)!
        gtk_widget_set_size_request(sidebar, 220, -1)
        gtk_box_append(kh_box(sidebar), makeLabel("Keychains"))
        gtk_box_append(kh_box(sidebar), keychainList)
        gtk_box_append(kh_box(sidebar), keychainCommands)
        gtk_box_append(kh_box(sidebar), makeLabel("Category"))
        gtk_box_append(kh_box(sidebar), categoryList)

        search = gtk_search_entry_new()
        kh_set_accessible_label(search, "Search")
        message = makeLabel("")
        gtk_label_set_wrap(kh_label(message), 1)
        items = ItemsTable()
        let content = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)!
        gtk_box_append(kh_box(content), search)
        gtk_box_append(kh_box(content), message)
        gtk_box_append(kh_box(content), items.scroller)

        let paned = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL)!
        gtk_paned_set_start_child(kh_paned(paned), sidebar)
        gtk_paned_set_end_child(kh_paned(paned), content)
        gtk_paned_set_position(kh_paned(paned), 240)
        gtk_paned_set_shrink_start_child(kh_paned(paned), 0)
        gtk_window_set_child(kh_window(window), paned)

        for (title, name, action) in commands {
            let button = gtk_button_new_with_label(title)!
            kh_set_accessible_label(button, name)
            gtk_widget_set_tooltip_text(button, name)
            gtk_flow_box_append(kh_flow_box(keychainCommands), button)
            connect(button, "clicked") { [unowned self] in action(self)() }
        }
        connect(window, "destroy", onClose)
        connect(search, "search-changed") { [unowned self] in
            model.browser.search = String(cString: gtk_editable_get_text(kh_editable(search)))
            draw()
        }
        // Enter in the search goes to the items found, where Ctrl+C and Delete act.
        connect(search, "activate") { [unowned self] in gtk_widget_grab_focus(items.view) }
        connect(lockButton, "clicked") { [unowned self] in toggleLock() }
        connect(newItem, "clicked") { [unowned self] in newPasswordItem() }
        connect(deleteItem, "clicked") { [unowned self] in deleteSelectedItem() }
        connect(info, "clicked") { [unowned self] in if let row = items.selected { openItem(row) } }
        connect(copy, "clicked") { [unowned self] in copySelectedPassword() }
        connect(sync, "clicked") { [unowned self] in SyncWindow.show(parent: window) }
        connect(ssh, "clicked") { [unowned self] in SSHKeysWindow.show(parent: window, model: model) }
        connectRows(keychainList) { [unowned self] index in
            guard index < shownKeychains.count else { return }
            model.select(shownKeychains[index].path)
            draw()
        }
        connectRows(categoryList) { [unowned self] index in
            model.browser.category = ItemCategory.allCases[index]
            draw()
        }
        items.onSort = { [unowned self] column, ascending in
            model.browser.sortColumn = column
            model.browser.ascending = ascending
            draw()
        }
        items.onActivate = { [unowned self] row in openItem(row) }
        shortcut("<Control>f") { [unowned self] in gtk_widget_grab_focus(search) }
        shortcut("Delete") { [unowned self] in deleteSelectedItem() }
        shortcut("<Control>c") { [unowned self] in copySelectedPassword() }
        shortcut("<Control>q") { [unowned self] in gtk_window_destroy(kh_window(window)) }
        // Live: another program's adds and deletes show within a second; a lost agent is retried.
        let tick = Callback { [unowned self] in
            model.refresh()
            draw()
        }
        callbacks.append(tick)
        g_timeout_add(1000, { data in
            guard let data else { return 0 }
            MainActor.assumeIsolated { Unmanaged<Callback>.fromOpaque(data).takeUnretainedValue().action() }
            return 1
        }, tick.pointer)
    }

    func show() {
        model.refresh()
        draw()
        gtk_list_box_select_row(kh_list_box(categoryList), gtk_list_box_get_row_at_index(kh_list_box(categoryList), 0))
        gtk_window_present(kh_window(window))
    }

    /// Shows what the model says.
    func draw() {
        if model.keychains != shownKeychains {
            shownKeychains = model.keychains
            while let row = gtk_list_box_get_row_at_index(kh_list_box(keychainList), 0) {
                gtk_list_box_remove(kh_list_box(keychainList), kh_widget(UnsafeMutableRawPointer(row)))
            }
            for entry in shownKeychains {
                let row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
                gtk_box_append(kh_box(row), gtk_image_new_from_icon_name(entry.isUnlocked ? "changes-allow-symbolic" : "changes-prevent-symbolic"))
                gtk_box_append(kh_box(row), makeLabel(entry.name + (entry.isDefault ? " (default)" : "")))
                kh_set_accessible_label(row, entry.accessibleDescription)
                gtk_list_box_append(kh_list_box(keychainList), row)
            }
        }
        if let index = shownKeychains.firstIndex(where: { $0.path == model.selected }) {
            gtk_list_box_select_row(kh_list_box(keychainList), gtk_list_box_get_row_at_index(kh_list_box(keychainList), Int32(index)))
        }
        let unlocked = model.selectedKeychain?.isUnlocked ?? false
        let title = unlocked ? "Lock" : "Unlock"
        gtk_button_set_label(kh_button(lockButton), title)
        kh_set_accessible_label(lockButton, title)
        gtk_widget_set_sensitive(lockButton, (model.selectedKeychain?.hasPassword ?? false) ? 1 : 0)
        let locked = unlocked || model.selectedKeychain == nil ? "" : "This keychain is locked."
        gtk_label_set_text(kh_label(message), model.message ?? notice ?? locked)
        items.show(model.shown)
    }

    /// Says the outcome of a command in the window: its error, or nothing when it succeeded.
    func report(_ error: String?) {
        notice = error
        draw()
    }

    func toggleLock() {
        guard let keychain = model.selectedKeychain else { return }
        if keychain.isUnlocked {
            model.lockSelected()
            draw()
            return
        }
        FormDialog.ask(parent: window, title: "Unlock Keychain", prompt: "Enter the password to unlock the keychain \"\(keychain.name)\".",
                       fields: [.password("Password")]) { [unowned self] values in
            let error = model.unlockSelected(password: values.password("Password"))
            draw()
            return error
        }
    }

    func connect(_ widget: UnsafeMutablePointer<GtkWidget>?, _ signal: String, _ action: @escaping () -> Void) {
        let callback = Callback(action)
        callbacks.append(callback)
        callback.connect(raw(widget), signal)
    }

    private func shortcut(_ trigger: String, _ action: @escaping () -> Void) {
        let callback = Callback(action)
        callbacks.append(callback)
        kh_add_shortcut(window, trigger, { _, _, data in
            guard let data else { return 0 }
            MainActor.assumeIsolated { Unmanaged<Callback>.fromOpaque(data).takeUnretainedValue().action() }
            return 1
        }, callback.pointer)
    }

    /// Calls `action` with the index of the row selected in `list`.
    private func connectRows(_ list: UnsafeMutablePointer<GtkWidget>, _ action: @escaping (Int) -> Void) {
        let callback = Callback {
            guard let row = gtk_list_box_get_selected_row(kh_list_box(list)) else { return }
            action(Int(gtk_list_box_row_get_index(row)))
        }
        callbacks.append(callback)
        callback.connect(raw(list), "selected-rows-changed")
    }
}

/// A button showing an icon, named for screen readers and in its tooltip.
@MainActor
func iconButton(_ icon: String, _ name: String) -> UnsafeMutablePointer<GtkWidget> {
    let button = gtk_button_new_from_icon_name(icon)!
    kh_set_accessible_label(button, name)
    gtk_widget_set_tooltip_text(button, name)
    return button
}
