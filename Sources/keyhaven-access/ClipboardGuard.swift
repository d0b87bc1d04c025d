import CGtk
import FoundationEssentials

/// Copy Password's clipboard: the secret is put there, marked with KDE's password-manager hint
/// (`x-kde-passwordManagerHint`) that clipboard managers read as "keep out of the history", and
/// taken away 30 seconds later, or when Keychain Access quits, if the clipboard still holds it
/// (anything copied since stays). `KEYHAVEN_CLIPBOARD_SECONDS` sets another delay (the tests'
/// shorter one).
@MainActor
final class ClipboardGuard {
    let seconds: UInt32 = ProcessInfo.processInfo.environment["KEYHAVEN_CLIPBOARD_SECONDS"].flatMap { UInt32($0) } ?? 30
    private var pending: [Callback] = []
    /// What the last copy put on the clipboard (a reference of ours), until it is taken away.
    private var latest: UnsafeMutablePointer<GdkContentProvider>?

    func copy(_ secret: [UInt8]) {
        guard let clipboard = kh_clipboard() else { return }
        var text = secret.map { CChar(bitPattern: $0) } + [0]
        let content = kh_clipboard_set_secret(clipboard, text)
        text.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        guard let content else { return }
        forget()
        latest = content
        // The timer's own reference: no later copy can take this one's address meanwhile.
        g_object_ref(UnsafeMutableRawPointer(content))
        var callback: Callback?
        callback = Callback { [unowned self] in
            if kh_clipboard_holds(clipboard, content) != 0 { gdk_clipboard_set_content(clipboard, nil) }
            if latest == content { forget() }
            g_object_unref(UnsafeMutableRawPointer(content))
            pending.removeAll { $0 === callback }
        }
        pending.append(callback!)
        g_timeout_add_seconds(seconds, { data in
            guard let data else { return 0 }
            MainActor.assumeIsolated { Unmanaged<Callback>.fromOpaque(data).takeUnretainedValue().action() }
            return 0
        }, callback!.pointer)
    }

    /// Takes the last copy away now if the clipboard still holds it: Keychain Access is quitting,
    /// and a clipboard manager would otherwise keep what the clipboard held when it left.
    func clearNow() {
        guard let clipboard = kh_clipboard(), let latest else { return }
        kh_clipboard_clear_now(clipboard, latest)
        forget()
    }

    private func forget() {
        if let latest { g_object_unref(UnsafeMutableRawPointer(latest)) }
        latest = nil
    }
}
