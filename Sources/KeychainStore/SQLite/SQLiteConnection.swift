// Implementation-only: a target that sees Keyhaven's modules without depending on them has no map
// of its C modules (docs/architecture.md); no type here stores a C type.
@_implementationOnly import CSQLite
import FoundationEssentials

/// One SQLite connection. The only type (with ``SQLiteStatement``) that calls SQLite.
///
/// Not thread-safe: the owner serializes every use (``KeychainDatabase`` holds it behind a mutex).
package final class SQLiteConnection {
    private let handle: OpaquePointer
    private var statementCache: [String: SQLiteStatement] = [:]
    /// Statements whose SQL is made from a query's shape, cached by that shape.
    private var shapedStatements: [StatementShape: SQLiteStatement] = [:]
    /// Statements each cache keeps at most: queries with ever new sets of criteria (a client of
    /// the agent can send any) must not grow memory without end. A full cache starts over;
    /// a statement still in use lives on until its user lets go.
    static let cacheLimit = 256

    /// Opens (never creates) the database at `path`, or creates it when `create` is true.
    package init(path: String, create: Bool, busyTimeoutMilliseconds: Int32 = 15_000) throws(StoreError) {
        var db: OpaquePointer?
        var flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_PRIVATECACHE
        if create { flags |= SQLITE_OPEN_CREATE }
        let rc = sqlite3_open_v2(path, &db, flags, nil)
        guard rc == SQLITE_OK, let db else {
            let error = SQLiteConnection.error(rc, db.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open")
            if let db { sqlite3_close_v2(db) }
            throw error
        }
        handle = db
        sqlite3_extended_result_codes(db, 1)
        sqlite3_busy_timeout(db, busyTimeoutMilliseconds)
    }

    deinit {
        shapedStatements.removeAll()
        statementCache.removeAll()
        sqlite3_close_v2(handle)
    }

    /// Runs one or more statements that take no parameters and return no rows.
    package func execute(_ sql: String) throws(StoreError) {
        let rc = sqlite3_exec(handle, sql, nil, nil, nil)
        guard rc == SQLITE_OK else { throw lastError(rc) }
    }

    /// A prepared statement, cached by its SQL text and reset for reuse.
    package func prepare(_ sql: String) throws(StoreError) -> SQLiteStatement {
        if let cached = statementCache[sql] {
            cached.reset()
            return cached
        }
        var stmt: OpaquePointer?
        let rc = sqlite3_prepare_v3(handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &stmt, nil)
        guard rc == SQLITE_OK, let stmt else { throw lastError(rc) }
        let statement = SQLiteStatement(stmt, connection: self)
        if statementCache.count >= Self.cacheLimit { statementCache.removeAll() }
        statementCache[sql] = statement
        return statement
    }

    /// A prepared statement cached by `shape`: `sql` is called only the first time a shape is
    /// seen, so a query's SQL text is not built again for every call.
    package func prepare(shape: StatementShape, sql: () -> String) throws(StoreError) -> SQLiteStatement {
        if let cached = shapedStatements[shape] {
            cached.reset()
            return cached
        }
        let statement = try prepare(sql())
        if shapedStatements.count >= Self.cacheLimit { shapedStatements.removeAll() }
        shapedStatements[shape] = statement
        return statement
    }

    /// Runs `body` inside a transaction; rolls back if it throws.
    ///
    /// `immediate` takes the write lock at the start, so two writers never deadlock on upgrade.
    /// The three statements are prepared once (parsing them was a tenth of a look-up's cost).
    package func transaction<T>(immediate: Bool, _ body: () throws(StoreError) -> T) throws(StoreError) -> T {
        try prepare(immediate ? "BEGIN IMMEDIATE" : "BEGIN DEFERRED").run()
        do {
            let value = try body()
            try prepare("COMMIT").run()
            return value
        } catch {
            try? prepare("ROLLBACK").run()
            throw error
        }
    }

    package var changes: Int { Int(sqlite3_changes(handle)) }

    /// Prepared statements held in the caches.
    var cachedStatements: Int { statementCache.count + shapedStatements.count }
    /// The SQL texts of the cached statements.
    var cachedSQL: Set<String> { Set(statementCache.keys) }

    /// The error for a failed call, with SQLite's message (which never includes bound values).
    func lastError(_ rc: Int32) -> StoreError {
        SQLiteConnection.error(rc, String(cString: sqlite3_errmsg(handle)))
    }

    /// Maps an SQLite result code to the engine's error codes (the table is in docs/errors.md).
    package static func error(_ rc: Int32, _ detail: String) -> StoreError {
        let message = "SQLite: \(detail) (code \(rc))"
        switch rc & 0xFF {
        case SQLITE_CONSTRAINT: return StoreError(.duplicateItem, message)
        case SQLITE_FULL: return StoreError(.diskFull, message)
        case SQLITE_IOERR: return StoreError(.io, message)
        case SQLITE_READONLY, SQLITE_PERM: return StoreError(.readOnly, message)
        case SQLITE_CORRUPT: return StoreError(.decode, message)
        case SQLITE_NOTADB: return StoreError(.invalidKeychain, message)
        case SQLITE_NOMEM: return StoreError(.internalError, message)
        case SQLITE_TOOBIG: return StoreError(.dataTooLarge, message)
        default: return StoreError(.notAvailable, message)
        }
    }
}

@available(*, unavailable)
extension SQLiteConnection: Sendable {}

/// What the SQL text of a statement built from parts depends on (a table, column names, counts):
/// the key of ``SQLiteConnection/prepare(shape:sql:)``'s cache.
package struct StatementShape: Hashable, Sendable {
    package let table: String
    package let names: [String]
    package let numbers: [Int]

    package init(table: String, names: [String], numbers: [Int]) {
        self.table = table
        self.names = names
        self.numbers = numbers
    }
}
