import CGtk
import KeychainAccessCore

/// New Password Item's generator and strength meter, under its Password field: libpwquality
/// rates the password as it is typed, and Generate Password fills in a new random one.
@MainActor
enum StrengthMeter {
    static func attach(to dialog: FormDialog) {
        guard let entry = dialog.widget("Password") else { return }
        gtk_password_entry_set_show_peek_icon(kh_password_entry(entry), 1)
        let generate = gtk_button_new_with_label("Generate Password")!
        kh_set_accessible_label(generate, "Generate Password")
        let bar = gtk_level_bar_new_for_interval(0, 100)!
        kh_set_accessible_label(bar, "Password Strength")
        let verdict = makeLabel("")
        kh_set_accessible_label(verdict, "Strength")
        let row = gtk_box_new(GTK_ORIENTATION_HORIZONTAL, 8)!
        gtk_widget_set_hexpand(bar, 1)
        gtk_box_append(kh_box(row), bar)
        gtk_box_append(kh_box(row), generate)
        gtk_box_append(kh_box(dialog.extras), row)
        gtk_box_append(kh_box(dialog.extras), verdict)
        let rate = {
            var password = entryBytes(entry)
            defer { password.withUnsafeMutableBufferPointer { $0.update(repeating: 0) } }
            let rating = PasswordQuality.rate(password)
            gtk_level_bar_set_value(kh_level_bar(bar), Double(rating.score))
            let text = password.isEmpty ? "" : rating.level + (rating.reason.map { ": " + $0 } ?? "")
            gtk_label_set_text(kh_label(verdict), text)
            kh_set_accessible_description(bar, text)
        }
        dialog.connect(entry, "changed", rate)
        dialog.connect(generate, "clicked") {
            guard var generated = PasswordQuality.generate() else {
                dialog.say("libpwquality could not generate a password.")
                return
            }
            var text = generated.map { CChar(bitPattern: $0) } + [0]
            gtk_editable_set_text(kh_editable(entry), text)
            text.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
            generated.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        }
    }
}
