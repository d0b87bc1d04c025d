#ifndef KEYHAVEN_CGTK_SHIM_H
#define KEYHAVEN_CGTK_SHIM_H
#include <gtk/gtk.h>

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
static inline GtkHeaderBar *kh_header_bar(GtkWidget *widget) { return GTK_HEADER_BAR(widget); }
// A column view over any selection model; a column's sorter from any sorter.
static inline GtkWidget *kh_column_view_new(void *selection) { return gtk_column_view_new(GTK_SELECTION_MODEL(selection)); }
static inline void kh_column_set_sorter(GtkColumnViewColumn *column, void *sorter) {
    gtk_column_view_column_set_sorter(column, GTK_SORTER(sorter));
}
#endif
