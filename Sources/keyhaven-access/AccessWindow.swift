import CGtk
import KeychainAccessCore

/// The main window: the keychains and categories on the left, the search and the items on the
/// right, Lock or Unlock in the header. What it shows comes from ``KeychainAccessModel``.
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
    private var callbacks: [Callback] = []
    private var shownKeychains: [KeychainEntry] = []

    init(onClose: @escaping () -> Void) {
        window = gtk_window_new()
        gtk_window_set_title(kh_window(window), "Keychain Access")
        gtk_window_set_default_size(kh_window(window), 980, 600)
        let header = gtk_header_bar_new()!
        gtk_window_set_titlebar(kh_window(window), header)
        lockButton = gtk_button_new_with_label("Unlock")
        kh_set_accessible_label(lockButton, "Unlock")
        gtk_header_bar_pack_start(kh_header_bar(header), lockButton)

        keychainList = gtk_list_box_new()
        kh_set_accessible_label(keychainList, "Keychains")
        categoryList = gtk_list_box_new()
        kh_set_accessible_label(categoryList, "Category")
        for category in ItemCategory.allCases {
            gtk_list_box_append(kh_list_box(categoryList), makeLabel(category.rawValue))
        }
        let sidebar = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)!
        gtk_widget_set_size_request(sidebar, 200, -1)
        gtk_box_append(kh_box(sidebar), makeLabel("Keychains"))
        gtk_box_append(kh_box(sidebar), keychainList)
        gtk_box_append(kh_box(sidebar), makeLabel("Category"))
        gtk_box_append(kh_box(sidebar), categoryList)

        search = gtk_search_entry_new()
        kh_set_accessible_label(search, "Search")
        message = makeLabel("")
        items = ItemsTable()
        let content = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)!
        gtk_box_append(kh_box(content), search)
        gtk_box_append(kh_box(content), message)
        gtk_box_append(kh_box(content), items.scroller)

        let paned = gtk_paned_new(GTK_ORIENTATION_HORIZONTAL)!
        gtk_paned_set_start_child(kh_paned(paned), sidebar)
        gtk_paned_set_end_child(kh_paned(paned), content)
        gtk_paned_set_position(kh_paned(paned), 220)
        gtk_paned_set_shrink_start_child(kh_paned(paned), 0)
        gtk_window_set_child(kh_window(window), paned)

        connect(window, "destroy", onClose)
        connect(search, "search-changed") { [unowned self] in
            model.browser.search = String(cString: gtk_editable_get_text(kh_editable(search)))
            draw()
        }
        connect(lockButton, "clicked") { [unowned self] in toggleLock() }
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
        gtk_label_set_text(kh_label(message), model.message ?? (unlocked || model.selectedKeychain == nil ? "" : "This keychain is locked."))
        items.show(model.shown)
    }

    func toggleLock() {
        guard let keychain = model.selectedKeychain else { return }
        if keychain.isUnlocked {
            model.lockSelected()
            draw()
            return
        }
        PasswordDialog.ask(parent: window, title: "Unlock Keychain",
                           prompt: "Enter the password to unlock the keychain \"\(keychain.name)\".") { [unowned self] password in
            let error = model.unlockSelected(password: password)
            draw()
            return error
        }
    }

    private func connect(_ widget: UnsafeMutablePointer<GtkWidget>?, _ signal: String, _ action: @escaping () -> Void) {
        let callback = Callback(action)
        callbacks.append(callback)
        callback.connect(raw(widget), signal)
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
