import CGtk

/// A Swift closure GTK calls back: passed as a signal's user data, kept alive by its owner.
@MainActor
final class Callback {
    let action: () -> Void
    init(_ action: @escaping () -> Void) { self.action = action }

    var pointer: UnsafeMutableRawPointer { Unmanaged.passUnretained(self).toOpaque() }

    /// Connects `signal` of `instance` to this callback.
    func connect(_ instance: UnsafeMutableRawPointer?, _ signal: String) {
        kh_connect(instance, signal, { _, data in
            guard let data else { return }
            MainActor.assumeIsolated { Unmanaged<Callback>.fromOpaque(data).takeUnretainedValue().action() }
        }, pointer)
    }
}

/// A widget as a raw pointer, for GTK's functions that take any instance.
func raw(_ widget: UnsafeMutablePointer<GtkWidget>?) -> UnsafeMutableRawPointer? { UnsafeMutableRawPointer(widget) }

/// A label with text, aligned at the start.
func makeLabel(_ text: String) -> UnsafeMutablePointer<GtkWidget> {
    let label = gtk_label_new(text)!
    gtk_label_set_xalign(kh_label(label), 0)
    return label
}
