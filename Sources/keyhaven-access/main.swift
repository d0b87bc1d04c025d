// keyhaven-access: Keychain Access for Linux, a GTK 4 window over the agent.
import CGtk

gtk_init()
let loop = g_main_loop_new(nil, 0)
MainActor.assumeIsolated {
    let window = AccessWindow(onClose: { g_main_loop_quit(loop) })
    window.show()
    AccessWindow.current = window
}
g_main_loop_run(loop)
