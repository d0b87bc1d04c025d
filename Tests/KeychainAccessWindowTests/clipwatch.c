// Prints each change of the CLIPBOARD selection's owner, as XFixes reports it: "owner" (a program
// took it), "cleared" (its owner gave it up), "window-destroyed" or "client-closed" (its owner
// went away without giving it up). driver.py reads it to tell a clipboard cleared on quit from
// one merely left behind.
#include <X11/Xlib.h>
#include <X11/extensions/Xfixes.h>
#include <stdio.h>

int main(void) {
    Display *display = XOpenDisplay(NULL);
    if (!display) return 1;
    int event_base, error_base;
    if (!XFixesQueryExtension(display, &event_base, &error_base)) return 1;
    Atom clipboard = XInternAtom(display, "CLIPBOARD", False);
    XFixesSelectSelectionInput(display, DefaultRootWindow(display), clipboard,
                               XFixesSetSelectionOwnerNotifyMask | XFixesSelectionWindowDestroyNotifyMask
                                   | XFixesSelectionClientCloseNotifyMask);
    XSync(display, False);
    printf("watching\n");
    fflush(stdout);
    for (;;) {
        XEvent event;
        XNextEvent(display, &event);
        if (event.type != event_base + XFixesSelectionNotify) continue;
        XFixesSelectionNotifyEvent *change = (XFixesSelectionNotifyEvent *)&event;
        const char *what = change->subtype == XFixesSetSelectionOwnerNotify ? (change->owner ? "owner" : "cleared")
                         : change->subtype == XFixesSelectionWindowDestroyNotify ? "window-destroyed" : "client-closed";
        printf("%s\n", what);
        fflush(stdout);
    }
}
