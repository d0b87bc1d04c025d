/// The SQL schema of a keychain file (format versions 1 and 2: the same tables). Documented in docs/file-format.md.
enum KeychainSchema {
    /// `PRAGMA application_id`: "KHVN", so a keychain file is recognisable and any other SQLite
    /// file is refused as not a keychain.
    static let applicationID: Int32 = 0x4B48_564E
    /// The format version this build writes and the newest it reads. Version 1 files are read and
    /// migrated (docs/file-format.md, "Format versions").
    static let formatVersion: Int64 = 2

    static func createStatements() -> [String] {
        let sql = [
            "CREATE TABLE keychain(name TEXT PRIMARY KEY NOT NULL, value BLOB NOT NULL) WITHOUT ROWID",
            """
            CREATE TABLE keybag(keyclass TEXT NOT NULL, protection TEXT NOT NULL, wrapped BLOB NOT NULL,
                                PRIMARY KEY(keyclass, protection)) WITHOUT ROWID
            """,
        ]
        return sql + classTables()
    }

    /// Every class's table and indexes, created where missing: a file made before a class
    /// existed (the key table came after format 2) gains it when opened; nothing else changes.
    static func classTables() -> [String] {
        ItemClass.allCases.flatMap(createTable) + secretAttributeTable()
    }

    /// The keyed hashes of generic passwords' Secret Service lookup attributes, one row per pair
    /// (``SecretServiceAttributes``); a row's entries go with it (the trigger).
    private static func secretAttributeTable() -> [String] {
        [
            "CREATE TABLE IF NOT EXISTS genp_ssattr(hash BLOB NOT NULL, item INTEGER NOT NULL, PRIMARY KEY(hash, item)) WITHOUT ROWID",
            "CREATE INDEX IF NOT EXISTS genp_ssattr_item ON genp_ssattr(item)",
            "CREATE TRIGGER IF NOT EXISTS genp_ssattr_gone AFTER DELETE ON genp BEGIN DELETE FROM genp_ssattr WHERE item = old.rowid; END",
        ]
    }

    /// One table per class: the row's identity, its key class, the tombstone flag, the two
    /// encrypted blobs, and one keyed-hash column per attribute, UNIQUE over the primary key.
    private static func createTable(_ itemClass: ItemClass) -> [String] {
        let table = itemClass.rawValue
        var sql = [tableStatement(itemClass, named: table)]
        for attribute in itemClass.schema.attributes where attribute.isIndexed {
            sql.append("CREATE INDEX IF NOT EXISTS \(table)_\(attribute.name) ON \(table)(\(attribute.column))")
        }
        return sql
    }

    private static func tableStatement(_ itemClass: ItemClass, named table: String) -> String {
        let schema = itemClass.schema
        let attributeColumns = schema.attributes.map { "\($0.column) BLOB" }.joined(separator: ", ")
        let unique = schema.primaryKey.map(\.column).joined(separator: ", ")
        return """
            CREATE TABLE IF NOT EXISTS \(table)(rowid INTEGER PRIMARY KEY AUTOINCREMENT, persistref BLOB NOT NULL UNIQUE,
                keyclass TEXT NOT NULL, tomb INTEGER NOT NULL DEFAULT 0, metadata BLOB NOT NULL, secret BLOB,
                \(attributeColumns), UNIQUE(\(unique)))
            """
    }

    /// The generic-password column that tells Secret Service items apart, and the UNIQUE
    /// constraint that includes it. SQLite changes no constraint in place: the table is copied
    /// into one of the new shape (row ids, hence the lookup-attribute rows, kept; every row
    /// without a discriminator, the empty blob), then its indexes and trigger are made again.
    static let discriminatorColumn = "a_\(SecretServiceAttributes.discriminatorName)"

    static func addDiscriminator(existingColumns: [String]) -> [String] {
        let kept = existingColumns.joined(separator: ", ")
        return [
            "DROP TABLE IF EXISTS genp_new",
            tableStatement(.genericPassword, named: "genp_new"),
            "INSERT INTO genp_new(\(kept), \(discriminatorColumn)) SELECT \(kept), X'' FROM genp",
            "DROP TABLE genp",
            "ALTER TABLE genp_new RENAME TO genp",
        ] + classTables()
    }
}
