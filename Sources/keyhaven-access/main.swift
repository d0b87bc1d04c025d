// keyhaven-access: Keychain Access for Linux, a GTK 4 window over the agent.
import CGtk

gtk_init()
// The icon scripts/install puts in the icon theme, as the desktop entry names it.
gtk_window_set_default_icon_name("keyhaven-access")
let loop = g_main_loop_new(nil, 0)
MainActor.assumeIsolated {
    let window = AccessWindow(onClose: { g_main_loop_quit(loop) })
    window.show()
    AccessWindow.current = window
}
g_main_loop_run(loop)
// A password still on the clipboard goes with the window, rather than stay for a clipboard manager.
MainActor.assumeIsolated { AccessWindow.current?.clipboard.clearNow() }
