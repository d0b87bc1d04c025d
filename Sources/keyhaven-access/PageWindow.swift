import CGtk

/// A page of its own beside the main window (Sync, SSH Keys): a window over `parent` titled
/// `title`, its `children` in a padded column ending with Close, which closes it and brings the
/// main window back. `onDestroy` runs when it goes, however it is closed.
@MainActor
struct PageWindow {
    let window: UnsafeMutablePointer<GtkWidget>
    let callbacks: [Callback]

    init(title: String, parent: UnsafeMutablePointer<GtkWidget>, width: Int32, height: Int32,
         children: [UnsafeMutablePointer<GtkWidget>], onDestroy: @escaping () -> Void) {
        let window = gtk_window_new()!
        gtk_window_set_title(kh_window(window), title)
        gtk_window_set_transient_for(kh_window(window), kh_window(parent))
        gtk_window_set_default_size(kh_window(window), width, height)
        let box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8)!
        for margin in [gtk_widget_set_margin_top, gtk_widget_set_margin_bottom, gtk_widget_set_margin_start, gtk_widget_set_margin_end] {
            margin(box, 12)
        }
        let close = gtk_button_new_with_label("Close")!
        kh_set_accessible_label(close, "Close")
        gtk_widget_set_halign(close, GTK_ALIGN_END)
        for child in children + [close] { gtk_box_append(kh_box(box), child) }
        gtk_window_set_child(kh_window(window), box)
        let closed = Callback(onDestroy)
        closed.connect(raw(window), "destroy")
        let closing = Callback {
            gtk_window_destroy(kh_window(window))
            gtk_window_present(kh_window(parent))
        }
        closing.connect(raw(close), "clicked")
        (self.window, self.callbacks) = (window, [closed, closing])
    }
}
