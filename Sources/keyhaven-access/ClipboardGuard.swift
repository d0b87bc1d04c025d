import CGtk
import FoundationEssentials

/// Copy Password's clipboard: the secret is put there, and taken away 30 seconds later if the
/// clipboard still holds it (anything copied since stays). `KEYHAVEN_CLIPBOARD_SECONDS` sets
/// another delay (the tests' shorter one).
@MainActor
final class ClipboardGuard {
    let seconds: UInt32 = ProcessInfo.processInfo.environment["KEYHAVEN_CLIPBOARD_SECONDS"].flatMap { UInt32($0) } ?? 30
    private var pending: [Callback] = []

    func copy(_ secret: [UInt8]) {
        guard let clipboard = kh_clipboard() else { return }
        var text = secret.map { CChar(bitPattern: $0) } + [0]
        gdk_clipboard_set_text(clipboard, text)
        text.withUnsafeMutableBufferPointer { $0.update(repeating: 0) }
        guard let content = gdk_clipboard_get_content(clipboard) else { return }
        g_object_ref(UnsafeMutableRawPointer(content))
        var callback: Callback?
        callback = Callback { [unowned self] in
            if kh_clipboard_holds(clipboard, content) != 0 { gdk_clipboard_set_content(clipboard, nil) }
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
}
