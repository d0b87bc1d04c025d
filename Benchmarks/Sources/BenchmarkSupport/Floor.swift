import CSQLiteFloor
import Crypto
import Foundation

/// The floor: what any encrypted store on SQLite must at least spend. An indexed look-up in a
/// plain table plus one AES-256-GCM open of a blob of the same size, and for writes one insert
/// at the keychain's durability (WAL, `synchronous = FULL`, one transaction per write).
public final class Floor {
    private var db: OpaquePointer?
    private var select: OpaquePointer?
    private var upsert: OpaquePointer?
    private let key = SymmetricKey(size: .bits256)

    public init(path: String, items: Int) throws {
        try? FileManager.default.removeItem(atPath: path)
        guard sqlite3_open(path, &db) == SQLITE_OK else { throw FloorError("cannot open \(path)") }
        try execute("""
            PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;
            CREATE TABLE item(id INTEGER PRIMARY KEY, service TEXT NOT NULL, account TEXT NOT NULL, secret BLOB NOT NULL,
                              UNIQUE(service, account));
            """)
        sqlite3_prepare_v2(db, "SELECT secret FROM item WHERE service = ?1 AND account = ?2", -1, &select, nil)
        sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO item(service, account, secret) VALUES (?1, ?2, ?3)", -1, &upsert, nil)
        try execute("BEGIN")
        for index in 0..<items { try put(Fixture.account(index), Fixture.secret, transaction: false) }
        try execute("COMMIT")
    }

    deinit {
        sqlite3_finalize(select)
        sqlite3_finalize(upsert)
        sqlite3_close(db)
    }

    private func execute(_ sql: String) throws {
        guard sqlite3_exec(db, sql, nil, nil, nil) == SQLITE_OK else { throw FloorError(String(cString: sqlite3_errmsg(db))) }
    }

    /// The secret of one account: an indexed look-up and one AES-GCM open.
    public func get(_ account: String) throws -> Data {
        defer { sqlite3_reset(select) }
        sqlite3_bind_text(select, 1, Fixture.service, -1, floor_transient())
        sqlite3_bind_text(select, 2, account, -1, floor_transient())
        guard sqlite3_step(select) == SQLITE_ROW, let bytes = sqlite3_column_blob(select, 0) else { throw FloorError("no row") }
        let sealed = Data(bytes: bytes, count: Int(sqlite3_column_bytes(select, 0)))
        return try AES.GCM.open(AES.GCM.SealedBox(combined: sealed), using: key)
    }

    /// Seals and stores one secret, in a transaction of its own unless told otherwise.
    public func put(_ account: String, _ secret: Data, transaction: Bool = true) throws {
        let sealed = try AES.GCM.seal(secret, using: key).combined!
        if transaction { try execute("BEGIN IMMEDIATE") }
        defer { sqlite3_reset(upsert) }
        sqlite3_bind_text(upsert, 1, Fixture.service, -1, floor_transient())
        sqlite3_bind_text(upsert, 2, account, -1, floor_transient())
        _ = sealed.withUnsafeBytes { sqlite3_bind_blob(upsert, 3, $0.baseAddress, Int32($0.count), floor_transient()) }
        guard sqlite3_step(upsert) == SQLITE_DONE else { throw FloorError(String(cString: sqlite3_errmsg(db))) }
        if transaction { try execute("COMMIT") }
    }
}

public struct FloorError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
