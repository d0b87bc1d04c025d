import Foundation
import KeychainServices
import KeychainServicesExtras
import KeychainStore
import KeychainTestSupport
import Testing

/// Every single byte of an item row, of the keybag, of the keychain's header table and of
/// SQLite's file header, flipped in turn: never a crash, never a wrong secret or attribute;
/// the damaged item gives errSecDecode or is hidden, and the others stay readable.
@Suite(.freshKeychain())
struct TamperTests {
    /// The items: a victim whose row is damaged, and bystanders in other accessibility classes
    /// and another class of item.
    struct Item: Sendable {
        let account: String
        let accessible: String
        var isInternet = false
    }

    static let items = [
        Item(account: "victim", accessible: kSecAttrAccessibleWhenUnlocked as String),
        Item(account: "after-first-unlock", accessible: kSecAttrAccessibleAfterFirstUnlock as String),
        Item(account: "this-device-only", accessible: kSecAttrAccessibleWhenUnlockedThisDeviceOnly as String),
        Item(account: "always", accessible: kSecAttrAccessibleAlwaysThisDeviceOnly as String),
        Item(account: "internet", accessible: kSecAttrAccessibleWhenUnlocked as String, isInternet: true),
    ]

    static func query(_ item: Item) -> [String: Any] {
        var query: [String: Any] = [kSecClass as String: item.isInternet ? kSecClassInternetPassword : kSecClassGenericPassword,
                                    kSecAttrAccount as String: item.account]
        query[item.isInternet ? kSecAttrServer as String : kSecAttrService as String] = "tamper.example"
        return query
    }

    static func secret(of account: String) -> Data { Data("the secret of \(account), long enough to span blocks".utf8) }

    /// Reads an item with its data and attributes: .success only if every value is the one
    /// written; otherwise the status, or -1 for a wrong value.
    static func read(_ item: Item) -> OSStatus {
        var query = query(item)
        query[kSecReturnData as String] = true
        query[kSecReturnAttributes as String] = true
        var result: CFTypeRef?
        let status = SecItemCopyMatching(query as CFDictionary, &result)
        guard status == errSecSuccess else { return status }
        guard let found = result as? [String: Any], found[kSecValueData as String] as? Data == secret(of: item.account),
              found[kSecAttrAccount as String] as? String == item.account,
              found[kSecAttrLabel as String] as? String == "label of \(item.account)",
              found[kSecAttrAccessible as String] as? String == item.accessible else { return -1 }
        return errSecSuccess
    }

    /// What any read may give when the keychain itself is damaged: the right item or an error
    /// that says so (a keychain whose damaged header keeps it from unlocking stays locked);
    /// never a wrong value (-1) or a status that blames the caller.
    static let damageStatuses: Set<OSStatus> = [errSecSuccess, errSecDecode, errSecItemNotFound, errSecInvalidKeychain,
                                                errSecWrongSecVersion, errSecNotAvailable, errSecAuthFailed,
                                                errSecInteractionNotAllowed]

    /// Unlocks the (reopened) default keychain, if it has a password; the status.
    @discardableResult
    private func unlock() -> OSStatus {
        var keychain: SecKeychain?
        guard SecKeychainOpen(path, &keychain) == errSecSuccess else { return errSecNoSuchKeychain }
        return SecKeychainUnlock(keychain, UInt32(Self.password.count), Self.password, true)
    }

    private var path: String { TestHome.current!.keychainPath }

    static let password = Array("tamper password".utf8)

    /// With `password`, the default keychain is made with one first (more keybag rows, and a
    /// KDF in the header).
    private func populate(password: Bool = false) throws {
        if password {
            var keychain: SecKeychain?
            #expect(SecKeychainCreate(path, UInt32(Self.password.count), Self.password, false, nil, &keychain) == errSecSuccess)
        }
        for item in Self.items {
            var attributes = Self.query(item)
            attributes[kSecValueData as String] = Self.secret(of: item.account)
            attributes[kSecAttrLabel as String] = "label of \(item.account)"
            attributes[kSecAttrAccessible as String] = item.accessible
            #expect(SecItemAdd(attributes as CFDictionary, nil) == errSecSuccess)
        }
        for item in Self.items { #expect(Self.read(item) == errSecSuccess) }
    }

    /// Every variant of `value` with one byte flipped (all bits of the byte).
    static func flips(of value: SQLiteValue) -> [SQLiteValue] {
        switch value {
        case .blob(let data):
            return data.indices.map { i in var copy = data; copy[i] ^= 0xFF; return .blob(copy) }
        case .text(let text):
            let bytes = Array(text.utf8)
            return bytes.indices.map { i in
                var copy = bytes
                copy[i] ^= 0xFF
                return String(validating: copy, as: UTF8.self).map(SQLiteValue.text) ?? .blob(Data(copy))
            }
        case .integer(let number):
            return (0..<8).map { .integer(number ^ (0xFF << (8 * Int64($0)))) }
        case .null:
            return []
        }
    }

    /// Flips each byte of each of `columns` in the rows of `table` that `filter` selects, one at
    /// a time (rows are named by their `key` columns); after each flip, `check` is called on a
    /// freshly opened keychain with the column's name and the row's key; the original value is
    /// put back after each. Returns the number of flips.
    private func flipEveryByte(table: String, key: [String], columns: [String], filter: String = "1",
                               check: (_ column: String, _ key: [SQLiteValue]) throws -> Void) throws -> Int {
        let raw = try SQLiteConnection(path: path, create: false)
        let rows = try raw.prepare("SELECT \((key + columns).joined(separator: ", ")) FROM \(table) WHERE \(filter)").rows()
        let match = key.map { "\($0) = ?" }.joined(separator: " AND ")
        var flips = 0
        for row in rows {
            let rowKey = Array(row.prefix(key.count))
            for (offset, column) in columns.enumerated() {
                let update = try raw.prepare("UPDATE \(table) SET \(column) = ? WHERE \(match)")
                let original = row[key.count + offset]
                for flipped in Self.flips(of: original) {
                    try update.run([flipped] + rowKey)
                    KeychainRegistry.shared.closeAll()
                    try check(column, rowKey)
                    flips += 1
                }
                try update.run([original] + rowKey)
            }
        }
        return flips
    }

    /// Closes and checkpoints the keychain, then writes each variant of its file in turn (made
    /// from the whole file) and checks that every read gives the right item or a damage status;
    /// puts the file back. Returns the number of variants and the original file's size.
    private func checkFileVariants(unlocking: Bool, _ variants: (Data) -> [(label: String, bytes: Data)]) throws -> (Int, Int) {
        KeychainRegistry.shared.closeAll()
        try SQLiteConnection(path: path, create: false).execute("PRAGMA wal_checkpoint(TRUNCATE)")
        let original = try #require(FileManager.default.contents(atPath: path))
        let all = variants(original)
        for variant in all {
            try variant.bytes.write(to: URL(fileURLWithPath: path))
            if unlocking { unlock() }
            for item in Self.items {
                let status = Self.read(item)
                #expect(Self.damageStatuses.contains(status), "\(variant.label): \(item.account) gave \(status)")
            }
            KeychainRegistry.shared.closeAll()
            for suffix in ["-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
        }
        try original.write(to: URL(fileURLWithPath: path))
        return (all.count, original.count)
    }

    /// After the damage is undone, every item reads as written.
    private func expectEverythingReadable(unlocking: Bool) {
        KeychainRegistry.shared.closeAll()
        if unlocking { #expect(unlock() == errSecSuccess) }
        for item in Self.items { #expect(Self.read(item) == errSecSuccess) }
    }

    @Test("Every byte of every column of an item's row: errSecDecode or hidden, never wrong; the other items read")
    func itemRow() throws {
        try populate()
        let columns = try SQLiteConnection(path: path, create: false).prepare("SELECT * FROM genp").columnNames.filter { $0 != "rowid" }
        let flips = try flipEveryByte(table: "genp", key: ["rowid"], columns: columns, filter: "rowid = 1") { column, _ in
            let victim = Self.read(Self.items[0])
            #expect([errSecSuccess, errSecDecode, errSecItemNotFound].contains(victim), "\(column): the victim gave \(victim)")
            for bystander in Self.items.dropFirst() {
                #expect(Self.read(bystander) == errSecSuccess, "\(column): \(bystander.account) is unreadable")
            }
        }
        for item in Self.items { #expect(Self.read(item) == errSecSuccess) }
        #expect(flips > 300)
        Reliability.record("tampering: \(flips) single-byte flips of an item row; wrong values returned: 0")
    }

    @Test("Every byte of the keybag: the class whose key is damaged gives errors, never wrong data; the other classes read",
          arguments: [false, true])
    func keybag(withPassword: Bool) throws {
        try populate(password: withPassword)
        let classes = ["victim": "ak", "after-first-unlock": "ck", "this-device-only": "aku", "always": "dku", "internet": "ak"]
        var keys = Set<String>()
        let flips = try flipEveryByte(table: "keybag", key: ["keyclass", "protection"], columns: ["wrapped"]) { _, rowKey in
            let keyclass = rowKey[0].text ?? "?"
            keys.insert("\(keyclass)/\(rowKey[1].text ?? "?")")
            if withPassword { unlock() }
            for item in Self.items {
                let status = Self.read(item)
                // A password row is only used on another machine (adoption): damaging it harms nothing here.
                if rowKey[1].text == "password" {
                    #expect(status == errSecSuccess, "damaged \(keyclass)/password: \(item.account) gave \(status)")
                } else if keyclass == "index" || keyclass == classes[item.account] {
                    #expect(Self.damageStatuses.contains(status), "\(keyclass): \(item.account) gave \(status)")
                } else {
                    #expect(status == errSecSuccess, "damaged \(keyclass): \(item.account) gave \(status)")
                }
            }
        }
        expectEverythingReadable(unlocking: withPassword)
        Reliability.record("tampering: \(flips) single-byte flips of the keybag (\(keys.count) rows, "
                           + "\(withPassword ? "with" : "without") a password); wrong values returned: 0")
    }

    @Test("With a damaged class key, setting a password is refused (it would drop that key for good) and nothing changes")
    func damagedKeybagIsNotRewritten() throws {
        try populate()
        let raw = try SQLiteConnection(path: path, create: false)
        try raw.prepare("UPDATE keybag SET wrapped = zeroblob(40) WHERE keyclass = 'ck'").run()
        KeychainRegistry.shared.closeAll()
        var keychain: SecKeychain?
        #expect(SecKeychainOpen(path, &keychain) == errSecSuccess)
        #expect(SecKeychainChangePassword(keychain, 0, nil, UInt32(Self.password.count), Self.password) == errSecDecode)
        #expect(try raw.prepare("SELECT count(*) FROM keybag").rows()[0][0] == .integer(7))
        #expect(try raw.prepare("SELECT count(*) FROM keychain WHERE name = 'kdf'").rows()[0][0] == .integer(0))
        #expect(Self.read(Self.items[1]) == errSecDecode)
        for item in Self.items where item.account != "after-first-unlock" { #expect(Self.read(item) == errSecSuccess) }
        // A new item of the damaged class cannot be made either; other classes can.
        var attributes = Self.query(TamperTests.Item(account: "new", accessible: kSecAttrAccessibleAfterFirstUnlock as String))
        attributes[kSecValueData as String] = Data("x".utf8)
        attributes[kSecAttrAccessible as String] = kSecAttrAccessibleAfterFirstUnlock
        #expect(SecItemAdd(attributes as CFDictionary, nil) == errSecDecode)
        attributes[kSecAttrAccessible as String] = kSecAttrAccessibleWhenUnlocked
        #expect(SecItemAdd(attributes as CFDictionary, nil) == errSecSuccess)
    }

    @Test("Every byte of the keychain's header table and of SQLite's 100-byte file header: errors, never wrong data",
          arguments: [false, true])
    func headers(withPassword: Bool) throws {
        try populate(password: withPassword)
        var flips = try flipEveryByte(table: "keychain", key: ["name"], columns: ["value"]) { _, rowKey in
            if withPassword { unlock() }
            for item in Self.items {
                let status = Self.read(item)
                #expect(Self.damageStatuses.contains(status), "header \(rowKey[0]): \(item.account) gave \(status)")
            }
        }
        // SQLite's own header: the keychain closed and checkpointed, one byte of the file flipped.
        flips += try checkFileVariants(unlocking: withPassword) { file in
            (0..<100).map { offset in
                var damaged = file
                damaged[offset] ^= 0xFF
                return (label: "file header byte \(offset)", bytes: damaged)
            }
        }.0
        expectEverythingReadable(unlocking: withPassword)
        Reliability.record("tampering: \(flips) single-byte flips of the header table and the file header "
                           + "(\(withPassword ? "with" : "without") a password); wrong values returned: 0")
    }

    @Test("The file cut at every page boundary, to 100 bytes, 1 byte and 0 bytes: a clear error, never wrong data")
    func truncations() throws {
        try populate()
        for i in 0..<100 {
            #expect(SecItemAdd([kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: "filler-\(i)",
                                kSecValueData as String: Data(repeating: UInt8(i), count: 512)] as CFDictionary, nil) == errSecSuccess)
        }
        let (cuts, whole) = try checkFileVariants(unlocking: false) { file in
            (Array(stride(from: file.count - 4096, to: 0, by: -4096)) + [100, 1, 0]).map { (label: "cut at \($0)", bytes: file.prefix($0)) }
        }
        expectEverythingReadable(unlocking: false)
        Reliability.record("tampering: the file cut at \(cuts) lengths (\(whole) bytes whole); wrong values returned: 0")
    }
}
