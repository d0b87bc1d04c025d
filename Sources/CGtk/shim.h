#ifndef KEYHAVEN_CGTK_SHIM_H
#define KEYHAVEN_CGTK_SHIM_H
#include <gtk/gtk.h>
#include <string.h>

// GTK's casting macros and variadic calls do not import into Swift: these do their work.

// A signal handler with one argument (the instance) and the user data.
typedef void (*kh_handler)(void *instance, void *data);
static inline gulong kh_connect(void *instance, const char *signal, kh_handler handler, void *data) {
    return g_signal_connect_data(instance, signal, G_CALLBACK(handler), data, NULL, (GConnectFlags)0);
}
// A list item factory's setup and bind handlers: (factory, list item, data).
typedef void (*kh_item_handler)(GtkSignalListItemFactory *factory, GtkListItem *item, void *data);
static inline gulong kh_connect_item(void *factory, const char *signal, kh_item_handler handler, void *data) {
    return g_signal_connect_data(factory, signal, G_CALLBACK(handler), data, NULL, (GConnectFlags)0);
}
// A row activated in a list box: (box, row, data).
typedef void (*kh_row_handler)(GtkListBox *box, GtkListBoxRow *row, void *data);
static inline gulong kh_connect_row(void *box, const char *signal, kh_row_handler handler, void *data) {
    return g_signal_connect_data(box, signal, G_CALLBACK(handler), data, NULL, (GConnectFlags)0);
}
// A column view's row activated (double click, Enter): (view, position, data).
typedef void (*kh_position_handler)(GtkColumnView *view, guint position, void *data);
static inline gulong kh_connect_position(void *view, const char *signal, kh_position_handler handler, void *data) {
    return g_signal_connect_data(view, signal, G_CALLBACK(handler), data, NULL, (GConnectFlags)0);
}
// A dialog's response: (dialog, response id, data).
typedef void (*kh_response_handler)(GtkDialog *dialog, int response, void *data);
static inline gulong kh_connect_response(void *dialog, kh_response_handler handler, void *data) {
    return g_signal_connect_data(dialog, "response", G_CALLBACK(handler), data, NULL, (GConnectFlags)0);
}
// A keyboard shortcut of `widget` (`trigger` as gtk_shortcut_trigger_parse_string reads it).
typedef gboolean (*kh_shortcut_handler)(GtkWidget *widget, GVariant *arguments, void *data);
static inline void kh_add_shortcut(GtkWidget *widget, const char *trigger, kh_shortcut_handler handler, void *data) {
    GtkEventController *controller = gtk_shortcut_controller_new();
    gtk_shortcut_controller_set_scope(GTK_SHORTCUT_CONTROLLER(controller), GTK_SHORTCUT_SCOPE_GLOBAL);
    GtkShortcut *shortcut = gtk_shortcut_new(gtk_shortcut_trigger_parse_string(trigger), gtk_callback_action_new(handler, data, NULL));
    gtk_shortcut_controller_add_shortcut(GTK_SHORTCUT_CONTROLLER(controller), shortcut);
    gtk_widget_add_controller(widget, controller);
}
// A file chooser to pick one existing file, as a dialog over `parent`.
static inline GtkWidget *kh_open_file_chooser(GtkWidget *parent, const char *title) {
    return gtk_file_chooser_dialog_new(title, GTK_WINDOW(parent), GTK_FILE_CHOOSER_ACTION_OPEN,
                                       "_Cancel", GTK_RESPONSE_CANCEL, "_Open", GTK_RESPONSE_ACCEPT, NULL);
}
static inline char *kh_file_chooser_path(GtkWidget *chooser) {
    GFile *file = gtk_file_chooser_get_file(GTK_FILE_CHOOSER(chooser));
    if (file == NULL) return NULL;
    char *path = g_file_get_path(file);
    g_object_unref(file);
    return path;
}
// The clipboard, and whether this program still holds `content` there.
static inline GdkClipboard *kh_clipboard(void) { return gdk_display_get_clipboard(gdk_display_get_default()); }
static inline gboolean kh_clipboard_holds(GdkClipboard *clipboard, GdkContentProvider *content) {
    return gdk_clipboard_is_local(clipboard) && gdk_clipboard_get_content(clipboard) == content;
}
// A password as the clipboard's text, offered with KDE's password-manager hint, which clipboard
// managers read as "keep this out of the history"; the content, a new reference.
static inline GdkContentProvider *kh_clipboard_set_secret(GdkClipboard *clipboard, const char *text) {
    GValue value = G_VALUE_INIT;
    g_value_init(&value, G_TYPE_STRING);
    g_value_set_string(&value, text);
    GBytes *hint = g_bytes_new_static("secret", 6);
    GdkContentProvider *providers[2] = {
        gdk_content_provider_new_for_value(&value),
        gdk_content_provider_new_for_bytes("x-kde-passwordManagerHint", hint),
    };
    GdkContentProvider *content = gdk_content_provider_new_union(providers, 2);
    gdk_clipboard_set_content(clipboard, content);
    g_bytes_unref(hint);
    // This value's copy of the text is wiped before it is freed (the provider holds its own).
    gchar *own = (gchar *)g_value_get_string(&value);
    if (own) memset(own, 0, strlen(own));
    g_value_unset(&value);
    return content;
}
// Takes the clipboard back from `content` if this program still holds it there, and waits until
// the display server knows (the program is about to end).
static inline void kh_clipboard_clear_now(GdkClipboard *clipboard, GdkContentProvider *content) {
    if (!kh_clipboard_holds(clipboard, content)) return;
    gdk_clipboard_set_content(clipboard, NULL);
    gdk_display_sync(gdk_clipboard_get_display(clipboard));
}

// The name a screen reader says, and AT-SPI finds the control by.
static inline void kh_set_accessible_label(GtkWidget *widget, const char *label) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_LABEL, label, -1);
}
static inline void kh_set_accessible_description(GtkWidget *widget, const char *text) {
    gtk_accessible_update_property(GTK_ACCESSIBLE(widget), GTK_ACCESSIBLE_PROPERTY_DESCRIPTION, text, -1);
}

static inline GtkWindow *kh_window(GtkWidget *widget) { return GTK_WINDOW(widget); }
static inline GtkBox *kh_box(GtkWidget *widget) { return GTK_BOX(widget); }
static inline GtkListBox *kh_list_box(GtkWidget *widget) { return GTK_LIST_BOX(widget); }
static inline GtkEditable *kh_editable(GtkWidget *widget) { return GTK_EDITABLE(widget); }
static inline GtkLabel *kh_label(GtkWidget *widget) { return GTK_LABEL(widget); }
static inline GtkButton *kh_button(GtkWidget *widget) { return GTK_BUTTON(widget); }
static inline GtkPaned *kh_paned(GtkWidget *widget) { return GTK_PANED(widget); }
static inline GtkScrolledWindow *kh_scrolled(GtkWidget *widget) { return GTK_SCROLLED_WINDOW(widget); }
static inline GtkColumnView *kh_column_view(GtkWidget *widget) { return GTK_COLUMN_VIEW(widget); }
static inline GtkWidget *kh_widget(void *object) { return GTK_WIDGET(object); }
static inline GtkStringObject *kh_string_object(void *object) { return GTK_STRING_OBJECT(object); }
static inline GListModel *kh_list_model(void *object) { return G_LIST_MODEL(object); }
static inline GtkFlowBox *kh_flow_box(GtkWidget *widget) { return GTK_FLOW_BOX(widget); }
static inline GtkPasswordEntry *kh_password_entry(GtkWidget *widget) { return GTK_PASSWORD_ENTRY(widget); }
static inline GtkSwitch *kh_switch(GtkWidget *widget) { return GTK_SWITCH(widget); }
static inline GtkToggleButton *kh_toggle(GtkWidget *widget) { return GTK_TOGGLE_BUTTON(widget); }
static inline GtkSpinButton *kh_spin(GtkWidget *widget) { return GTK_SPIN_BUTTON(widget); }
static inline GtkGrid *kh_grid(GtkWidget *widget) { return GTK_GRID(widget); }
static inline GtkNotebook *kh_notebook(GtkWidget *widget) { return GTK_NOTEBOOK(widget); }
static inline GtkLevelBar *kh_level_bar(GtkWidget *widget) { return GTK_LEVEL_BAR(widget); }
static inline GtkDialog *kh_dialog(GtkWidget *widget) { return GTK_DIALOG(widget); }
static inline GtkSingleSelection *kh_single_selection(void *object) { return GTK_SINGLE_SELECTION(object); }
static inline GtkHeaderBar *kh_header_bar(GtkWidget *widget) { return GTK_HEADER_BAR(widget); }
// A column view over any selection model; a column's sorter from any sorter.
static inline GtkWidget *kh_column_view_new(void *selection) { return gtk_column_view_new(GTK_SELECTION_MODEL(selection)); }
static inline void kh_column_set_sorter(GtkColumnViewColumn *column, void *sorter) {
    gtk_column_view_column_set_sorter(column, GTK_SORTER(sorter));
}
#endif
