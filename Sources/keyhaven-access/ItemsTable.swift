import CGtk
import KeychainAccessCore

/// The items list (accessible name "Items"): a column view of the rows the model shows, one
/// column per ``ItemBrowser/Column``, each sortable by a click on its header.
@MainActor
final class ItemsTable {
    /// The table whose cells the C callbacks fill (there is one window).
    static var current: ItemsTable?

    let scroller: UnsafeMutablePointer<GtkWidget>
    let view: UnsafeMutablePointer<GtkWidget>
    private let list: OpaquePointer
    private let selection: OpaquePointer
    private(set) var rows: [String: ItemRow] = [:]
    private var order: [String] = []
    var onSort: ((ItemBrowser.Column, Bool) -> Void)?
    /// A row opened: double click or Enter.
    var onActivate: ((ItemRow) -> Void)?

    init() {
        list = gtk_string_list_new(nil)
        let sorted = gtk_sort_list_model_new(kh_list_model(UnsafeMutableRawPointer(list)), nil)
        selection = gtk_single_selection_new(kh_list_model(UnsafeMutableRawPointer(sorted)))
        view = kh_column_view_new(UnsafeMutableRawPointer(selection))
        kh_set_accessible_label(view, "Items")
        for (index, column) in ItemBrowser.Column.allCases.enumerated() {
            let factory = gtk_signal_list_item_factory_new()
            let tag = UnsafeMutableRawPointer(bitPattern: index + 1)
            kh_connect_item(UnsafeMutableRawPointer(factory), "setup", { _, item, _ in
                let label = gtk_label_new("")!
                gtk_label_set_xalign(kh_label(label), 0)
                gtk_list_item_set_child(item, label)
            }, tag)
            kh_connect_item(UnsafeMutableRawPointer(factory), "bind", { _, item, data in
                guard let item, let data else { return }
                let column = ItemBrowser.Column.allCases[Int(bitPattern: data) - 1]
                guard let object = gtk_list_item_get_item(item), let label = gtk_list_item_get_child(item) else { return }
                let id = String(cString: gtk_string_object_get_string(kh_string_object(UnsafeMutableRawPointer(object))))
                let text = MainActor.assumeIsolated { ItemsTable.current?.rows[id].map { ItemBrowser.text($0, column) } ?? "" }
                gtk_label_set_text(kh_label(label), text)
            }, tag)
            let viewColumn = gtk_column_view_column_new(column.rawValue, factory)
            gtk_column_view_column_set_resizable(viewColumn, 1)
            gtk_column_view_column_set_expand(viewColumn, column == .name || column == .location ? 1 : 0)
            let sorter = gtk_custom_sorter_new({ a, b, data in
                guard let a, let b, let data else { return 0 }
                let column = ItemBrowser.Column.allCases[Int(bitPattern: data) - 1]
                let first = String(cString: gtk_string_object_get_string(kh_string_object(UnsafeMutableRawPointer(mutating: a))))
                let second = String(cString: gtk_string_object_get_string(kh_string_object(UnsafeMutableRawPointer(mutating: b))))
                return MainActor.assumeIsolated {
                    guard let table = ItemsTable.current, let x = table.rows[first], let y = table.rows[second] else { return 0 }
                    return Int32(ItemBrowser.compare(x, y, by: column))
                }
            }, tag, nil)
            kh_column_set_sorter(viewColumn, UnsafeMutableRawPointer(sorter))
            gtk_column_view_append_column(kh_column_view(view), viewColumn)
        }
        gtk_sort_list_model_set_sorter(sorted, gtk_column_view_get_sorter(kh_column_view(view)))
        scroller = gtk_scrolled_window_new()
        gtk_widget_set_vexpand(scroller, 1)
        gtk_scrolled_window_set_child(kh_scrolled(scroller), view)
        ItemsTable.current = self
        kh_connect_position(UnsafeMutableRawPointer(view), "activate", { _, position, _ in
            MainActor.assumeIsolated {
                guard let table = ItemsTable.current, let row = table.row(at: position) else { return }
                table.onActivate?(row)
            }
        }, nil)
    }

    /// The row selected, if any.
    var selected: ItemRow? { row(at: gtk_single_selection_get_selected(selection)) }

    private func row(at position: UInt32) -> ItemRow? {
        guard position != UInt32(GTK_INVALID_LIST_POSITION),
              let object = g_list_model_get_item(kh_list_model(UnsafeMutableRawPointer(selection)), position) else { return nil }
        defer { g_object_unref(object) }
        return rows[String(cString: gtk_string_object_get_string(kh_string_object(object)))]
    }

    /// Shows `shown` (in the model's order until a header is clicked); nothing changes on screen
    /// when the rows are the same.
    func show(_ shown: [ItemRow]) {
        let ids = shown.map(\.id)
        let byID = Dictionary(shown.map { ($0.id, $0) }, uniquingKeysWith: { first, _ in first })
        guard ids != order || byID != rows else { return }
        rows = byID
        let removed = UInt32(order.count)
        order = ids
        var strings = ids.map { strdup($0) }
        strings.append(nil)
        strings.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: UnsafePointer<CChar>?.self, capacity: buffer.count) {
                gtk_string_list_splice(list, 0, removed, $0)
            }
        }
        for string in strings { free(string) }
    }
}
