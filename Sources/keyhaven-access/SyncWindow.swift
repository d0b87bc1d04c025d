import CGtk
import Dispatch
import KeychainAccessCore

/// The Sync page: when this keychain home syncs, its server, its devices and the last sync, and
/// Sync Now (run by `keyhaven sync now` away from the window's thread, so the window stays live).
@MainActor
final class SyncWindow {
    private static var current: SyncWindow?

    let window: UnsafeMutablePointer<GtkWidget>
    private let state: UnsafeMutablePointer<GtkWidget>
    private let devices: UnsafeMutablePointer<GtkWidget>
    private let syncNow: UnsafeMutablePointer<GtkWidget>
    private let result: UnsafeMutablePointer<GtkWidget>
    private var callbacks: [Callback] = []
    private let keyhaven = ToolRun.sibling("keyhaven")

    static func show(parent: UnsafeMutablePointer<GtkWidget>) {
        if let current {
            gtk_window_present(kh_window(current.window))
            return
        }
        let sync = SyncWindow(parent: parent)
        current = sync
        sync.reload()
        gtk_window_present(kh_window(sync.window))
    }

    private init(parent: UnsafeMutablePointer<GtkWidget>) {
        state = makeLabel("")
        gtk_label_set_wrap(kh_label(state), 1)
        kh_set_accessible_label(state, "Sync State")
        devices = gtk_list_box_new()
        kh_set_accessible_label(devices, "Devices")
        syncNow = gtk_button_new_with_label("Sync Now")
        kh_set_accessible_label(syncNow, "Sync Now")
        result = makeLabel("")
        gtk_label_set_wrap(kh_label(result), 1)
        kh_set_accessible_label(result, "Sync Result")
        gtk_widget_set_halign(syncNow, GTK_ALIGN_START)
        let page = PageWindow(title: "Sync", parent: parent, width: 520, height: 360,
                              children: [state, makeLabel("Devices"), devices, syncNow, result]) { SyncWindow.current = nil }
        window = page.window
        callbacks = page.callbacks
        let clicked = Callback { [unowned self] in runSyncNow() }
        callbacks.append(clicked)
        clicked.connect(raw(syncNow), "clicked")
    }

    private func reload() {
        let summary = SyncSummary.read(keyhaven: keyhaven)
        var text: String
        if summary.syncing {
            text = "Syncing with \(summary.server): \(summary.items) item\(summary.items == 1 ? "" : "s")."
            text += " Last sync: " + (summary.lastSync.map { ItemBrowser.text(date: $0) } ?? "not yet") + "."
        } else {
            text = "This keychain home does not sync. Start with \"keyhaven sync create --server URL\", or join an account with \"keyhaven sync join\"."
        }
        if let problem = summary.problem { text += " " + problem }
        gtk_label_set_text(kh_label(state), text)
        gtk_widget_set_sensitive(syncNow, summary.syncing ? 1 : 0)
        while let row = gtk_list_box_get_row_at_index(kh_list_box(devices), 0) {
            gtk_list_box_remove(kh_list_box(devices), kh_widget(UnsafeMutableRawPointer(row)))
        }
        for device in summary.devices {
            let label = makeLabel(device.line)
            kh_set_accessible_label(label, device.line)
            gtk_list_box_append(kh_list_box(devices), label)
        }
    }

    private func runSyncNow() {
        gtk_widget_set_sensitive(syncNow, 0)
        gtk_label_set_text(kh_label(result), "Syncing…")
        let keyhaven = self.keyhaven
        DispatchQueue.global().async {
            let outcome = SyncSummary.syncNow(keyhaven: keyhaven)
            let box = Unmanaged.passRetained(OutcomeBox(outcome.message)).toOpaque()
            g_idle_add({ data in
                guard let data else { return 0 }
                let message = Unmanaged<OutcomeBox>.fromOpaque(data).takeRetainedValue().message
                MainActor.assumeIsolated { SyncWindow.current?.finished(message) }
                return 0
            }, box)
        }
    }

    private func finished(_ message: String) {
        gtk_label_set_text(kh_label(result), message)
        reload()
    }
}

/// Sync Now's answer, carried from its thread to the window's.
private final class OutcomeBox: Sendable {
    let message: String
    init(_ message: String) { self.message = message }
}
