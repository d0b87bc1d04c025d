import CGtk

/// A field of a ``FormDialog``; its name is its label and its accessible name.
enum FormField {
    case text(String, initial: String = "")
    case password(String)
    case check(String, initial: Bool)
    case number(String, initial: Int, range: ClosedRange<Int>)
}

/// What a ``FormDialog`` was given. Passwords are bytes, wiped once the submit handler returns.
struct FormValues {
    var texts: [String: String] = [:]
    var passwords: [String: [UInt8]] = [:]
    var checks: [String: Bool] = [:]
    var numbers: [String: Int] = [:]

    func text(_ name: String) -> String { texts[name] ?? "" }
    func password(_ name: String) -> [UInt8] { passwords[name] ?? [] }
}

/// A dialog of its own window: a prompt, fields, an error line, Cancel and the action's button.
/// An error the handler returns is said in the dialog (and to screen readers), which stays open.
@MainActor
final class FormDialog {
    private static var open: [FormDialog] = []

    let window: UnsafeMutablePointer<GtkWidget>
    private let parent: UnsafeMutablePointer<GtkWidget>
    /// Where a caller adds widgets of its own, above the error line.
    let extras: UnsafeMutablePointer<GtkWidget>
    let error: UnsafeMutablePointer<GtkWidget>
    private(set) var widgets: [(FormField, UnsafeMutablePointer<GtkWidget>)] = []
    private var callbacks: [Callback] = []
    private let submit: (FormValues) -> String?

    /// Shows the dialog over `parent`; `submit` is called with each entry of the form.
    @discardableResult
    static func ask(parent: UnsafeMutablePointer<GtkWidget>, title: String, prompt: String, fields: [FormField], action: String = "OK",
                    submit: @escaping (FormValues) -> String?) -> FormDialog {
        let dialog = FormDialog(parent: parent, title: title, prompt: prompt, fields: fields, action: action, submit: submit)
        open.append(dialog)
        gtk_window_present(kh_window(dialog.window))
        return dialog
    }

    private init(parent: UnsafeMutablePointer<GtkWidget>, title: String, prompt: String, fields: [FormField], action: String,
                 submit: @escaping (FormValues) -> String?) {
        self.submit = submit
        self.parent = parent
        window = gtk_window_new()
        gtk_window_set_title(kh_window(window), title)
        gtk_window_set_transient_for(kh_window(window), kh_window(parent))
        gtk_window_set_modal(kh_window(window), 1)
        let grid = gtk_grid_new()!
        gtk_grid_set_row_spacing(kh_grid(grid), 6)
        gtk_grid_set_column_spacing(kh_grid(grid), 8)
        for (index, field) in fields.enumerated() {
            let widget: UnsafeMutablePointer<GtkWidget>
            let name: String
            switch field {
            case .text(let label, let initial):
                name = label
                widget = gtk_entry_new()
                gtk_editable_set_text(kh_editable(widget), initial)
                gtk_widget_set_hexpand(widget, 1)
            case .password(let label):
                name = label
                widget = gtk_password_entry_new()
                gtk_widget_set_hexpand(widget, 1)
            case .check(let label, let initial):
                // A switch: GTK 4.8 gives a check button no action that assistive technology can call.
                name = label
                widget = gtk_switch_new()
                gtk_switch_set_active(kh_switch(widget), initial ? 1 : 0)
                gtk_widget_set_halign(widget, GTK_ALIGN_START)
            case .number(let label, let initial, let range):
                name = label
                widget = gtk_spin_button_new_with_range(Double(range.lowerBound), Double(range.upperBound), 1)
                gtk_spin_button_set_value(kh_spin(widget), Double(initial))
            }
            kh_set_accessible_label(widget, name)
            gtk_grid_attach(kh_grid(grid), makeLabel(name), 0, Int32(index), 1, 1)
            gtk_grid_attach(kh_grid(grid), widget, 1, Int32(index), 1, 1)
            widgets.append((field, widget))
        }
        extras = gtk_box_new(GTK_ORIENTATION_VERTICAL, 6)
        error = makeLabel("")
        gtk_label_set_wrap(kh_label(error), 1)
        let ok = gtk_button_new_with_label(action)!
        kh_set_accessible_label(ok, action)
        let cancel = gtk_button_new_with_label("Cancel")!
        let buttons = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 6)!
        gtk_widget_set_halign(buttons, GTK_ALIGN_END)
        gtk_box_append(kh_box(buttons), cancel)
        gtk_box_append(kh_box(buttons), ok)
        let box = gtk_box_new(GTK_ORIENTATION_VERTICAL, 8)!
        for margin in [gtk_widget_set_margin_top, gtk_widget_set_margin_bottom, gtk_widget_set_margin_start, gtk_widget_set_margin_end] {
            margin(box, 12)
        }
        let promptLabel = makeLabel(prompt)
        gtk_label_set_wrap(kh_label(promptLabel), 1)
        gtk_label_set_max_width_chars(kh_label(promptLabel), 60)
        gtk_box_append(kh_box(box), promptLabel)
        gtk_box_append(kh_box(box), grid)
        gtk_box_append(kh_box(box), extras)
        gtk_box_append(kh_box(box), error)
        gtk_box_append(kh_box(box), buttons)
        gtk_window_set_child(kh_window(window), box)
        connect(ok, "clicked") { [unowned self] in enter() }
        for (field, widget) in widgets {
            switch field {
            case .text, .password: connect(widget, "activate") { [unowned self] in enter() }
            default: break
            }
        }
        connect(cancel, "clicked") { [unowned self] in close() }
        if let first = widgets.first?.1 { gtk_widget_grab_focus(first) }
    }

    /// The widget of the field named `name`.
    func widget(_ name: String) -> UnsafeMutablePointer<GtkWidget>? {
        widgets.first { field, _ in
            switch field {
            case .text(let label, _), .password(let label), .check(let label, _), .number(let label, _, _): return label == name
            }
        }?.1
    }

    private func enter() {
        var values = FormValues()
        for (field, widget) in widgets {
            switch field {
            case .text(let name, _): values.texts[name] = String(cString: gtk_editable_get_text(kh_editable(widget)))
            case .password(let name):
                // The entry's bytes are copied once (no Swift string, which could not be wiped)
                // and the entry cleared at once.
                values.passwords[name] = entryBytes(widget)
                gtk_editable_set_text(kh_editable(widget), "")
            case .check(let name, _): values.checks[name] = gtk_switch_get_active(kh_switch(widget)) != 0
            case .number(let name, _, _): values.numbers[name] = Int(gtk_spin_button_get_value_as_int(kh_spin(widget)))
            }
        }
        let message = submit(values)
        for key in values.passwords.keys { values.passwords[key]!.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
        if let message {
            say(message)
        } else {
            close()
        }
    }

    /// Says `message` in the dialog's error line.
    func say(_ message: String) {
        gtk_label_set_text(kh_label(error), message)
        kh_set_accessible_description(window, message)
    }

    /// Closes the dialog and gives the keyboard back to the window it was over.
    func close() {
        gtk_window_destroy(kh_window(window))
        gtk_window_present(kh_window(parent))
        Self.open.removeAll { $0 === self }
    }

    func connect(_ widget: UnsafeMutablePointer<GtkWidget>?, _ signal: String, _ action: @escaping () -> Void) {
        let callback = Callback(action)
        callbacks.append(callback)
        callback.connect(raw(widget), signal)
    }
}

/// An editable's text as bytes (no Swift string).
@MainActor
func entryBytes(_ widget: UnsafeMutablePointer<GtkWidget>) -> [UInt8] {
    let text = gtk_editable_get_text(kh_editable(widget))!
    return Array(UnsafeBufferPointer(start: UnsafeRawPointer(text).assumingMemoryBound(to: UInt8.self), count: strlen(text)))
}
