// Implementation-only: a target that sees Keyhaven's modules without depending on them has no map
// of its C modules (docs/architecture.md); no type here stores a C type.
@_implementationOnly import CSQLite
import FoundationEssentials

/// A value bound to or read from an SQL statement.
package enum SQLiteValue: Sendable, Hashable {
    case null
    case integer(Int64)
    case text(String)
    case blob(Data)
}

/// A prepared statement owned by a ``SQLiteConnection``.
package final class SQLiteStatement {
    private let stmt: OpaquePointer
    private unowned let connection: SQLiteConnection

    init(_ stmt: OpaquePointer, connection: SQLiteConnection) {
        self.stmt = stmt
        self.connection = connection
    }

    deinit { sqlite3_finalize(stmt) }

    func reset() {
        sqlite3_reset(stmt)
        sqlite3_clear_bindings(stmt)
    }

    /// Binds values to the positional parameters `?1 ...`.
    package func bind(_ values: [SQLiteValue]) throws(StoreError) {
        for (offset, value) in values.enumerated() {
            let index = Int32(offset + 1)
            let rc: Int32
            switch value {
            case .null: rc = sqlite3_bind_null(stmt, index)
            case .integer(let v): rc = sqlite3_bind_int64(stmt, index, v)
            case .text(let s): rc = sqlite3_bind_text(stmt, index, s, -1, csqlite_transient())
            case .blob(let d):
                rc = d.withUnsafeBytes { raw in
                    // A zero-length blob must still be a blob, not NULL: pass a non-nil pointer.
                    let base = raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!
                    return sqlite3_bind_blob64(stmt, index, base, UInt64(raw.count), csqlite_transient())
                }
            }
            guard rc == SQLITE_OK else { throw connection.lastError(rc) }
        }
    }

    /// Steps once; returns true when a row is available.
    package func step() throws(StoreError) -> Bool {
        let rc = sqlite3_step(stmt)
        switch rc {
        case SQLITE_ROW: return true
        case SQLITE_DONE: return false
        default: throw connection.lastError(rc)
        }
    }

    /// Runs a statement that returns no rows.
    package func run(_ values: [SQLiteValue] = []) throws(StoreError) {
        try bind(values)
        defer { sqlite3_reset(stmt) }
        while try step() {}
    }

    /// The names of the result's columns.
    package var columnNames: [String] {
        (0..<sqlite3_column_count(stmt)).map { String(cString: sqlite3_column_name(stmt, $0)) }
    }

    /// Runs a query and collects every row.
    package func rows(_ values: [SQLiteValue] = []) throws(StoreError) -> [[SQLiteValue]] {
        try bind(values)
        defer { sqlite3_reset(stmt) }
        var result: [[SQLiteValue]] = []
        let count = sqlite3_column_count(stmt)
        while try step() {
            result.append((0..<count).map { column($0) })
        }
        return result
    }

    /// Runs a query and hands each row to `body` until it returns false or the rows run out.
    package func forEachRow(_ values: [SQLiteValue] = [], _ body: ([SQLiteValue]) throws(StoreError) -> Bool) throws(StoreError) {
        try bind(values)
        defer { sqlite3_reset(stmt) }
        let count = sqlite3_column_count(stmt)
        while try step() {
            guard try body((0..<count).map { column($0) }) else { return }
        }
    }

    private func column(_ index: Int32) -> SQLiteValue {
        switch sqlite3_column_type(stmt, index) {
        case SQLITE_INTEGER: return .integer(sqlite3_column_int64(stmt, index))
        case SQLITE_TEXT: return .text(String(cString: sqlite3_column_text(stmt, index)))
        case SQLITE_BLOB:
            let count = Int(sqlite3_column_bytes(stmt, index))
            guard count > 0, let base = sqlite3_column_blob(stmt, index) else { return .blob(Data()) }
            return .blob(Data(bytes: base, count: count))
        case SQLITE_FLOAT: return .integer(Int64(sqlite3_column_double(stmt, index)))
        default: return .null
        }
    }
}

@available(*, unavailable)
extension SQLiteStatement: Sendable {}

extension SQLiteValue {
    package var blob: Data? { if case .blob(let d) = self { return d } else { return nil } }
    package var integer: Int64? { if case .integer(let v) = self { return v } else { return nil } }
    package var text: String? { if case .text(let s) = self { return s } else { return nil } }
}
