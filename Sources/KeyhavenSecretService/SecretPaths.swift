#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainModel
import KeyhavenDBus
import KeyhavenSecretServiceCore

/// The Secret Service's object paths and what they name: collections are the keychains of the
/// home (`<name>.keychain-db`), the alias `default` the default keychain (wherever it is), the
/// alias `login` the login keychain; items are their generic passwords by persistent identity.
package enum SecretObject: Equatable, Sendable {
    case service
    case collection(keychain: String, path: String)
    case item(keychain: String, collection: String, reference: PersistentReference, path: String)
    case session(String)
    case prompt(String)

    static let root = SecretServiceNames.root
    static let collectionPrefix = root + "/collection/"
    static let aliasPrefix = root + "/aliases/"
    static let sessionPrefix = root + "/session/"
    static let promptPrefix = root + "/prompt/"
    /// The `session` collection (libsecret's `SECRET_COLLECTION_SESSION`): the agent's in-memory
    /// keychain, ``KeychainHome/sessionKeychainPath``.
    static let sessionName = "session"
    static let sessionCollection = collectionPrefix + sessionName

    static func isSession(_ keychain: String) -> Bool { keychain.hasSuffix("/" + KeychainHome.sessionKeychainFile) }

    /// The object at `path`, nil when nothing is there (a keychain that does not exist included).
    /// `defaultKeychain` is what the alias `default` names now (``defaultKeychain(of:)``).
    static func resolve(_ path: String, home: KeychainHome, defaultKeychain: String) -> SecretObject? {
        if path == root { return .service }
        if path.hasPrefix(sessionPrefix) { return .session(path) }
        if path.hasPrefix(promptPrefix) { return .prompt(path) }
        let rest: Substring
        let keychain: String
        let collectionPath: String
        if path.hasPrefix(aliasPrefix) {
            rest = path.dropFirst(aliasPrefix.count)
            let alias = rest.prefix { $0 != "/" }
            switch alias {
            case "default": keychain = defaultKeychain
            case "login": keychain = home.defaultKeychainPath
            case Substring(sessionName): keychain = home.sessionKeychainPath
            default: return nil
            }
            collectionPath = aliasPrefix + alias
        } else if path.hasPrefix(sessionCollection) && (path.count == sessionCollection.count || path.dropFirst(sessionCollection.count).hasPrefix("/")) {
            rest = path.dropFirst(collectionPrefix.count)
            keychain = home.sessionKeychainPath
            collectionPath = sessionCollection
        } else if path.hasPrefix(collectionPrefix) {
            rest = path.dropFirst(collectionPrefix.count)
            let component = String(rest.prefix { $0 != "/" })
            guard let name = decode(component) else { return nil }
            keychain = home.path + "/" + name + ".keychain-db"
            collectionPath = collectionPrefix + component
            guard FileManagerLite.exists(keychain) || keychain == home.defaultKeychainPath else { return nil }
        } else {
            return nil
        }
        let itemPart = rest.drop { $0 != "/" }
        if itemPart.isEmpty { return .collection(keychain: keychain, path: collectionPath) }
        let hex = itemPart.dropFirst()
        guard hex.count == 32, let bytes = Self.bytes(fromHex: hex) else { return nil }
        return .item(keychain: keychain, collection: collectionPath, reference: .uuid(.genericPassword, Data(bytes)), path: path)
    }

    /// The keychain the alias `default` names: the home's default keychain, as
    /// `keyhaven default-keychain -s` sets it, read anew (a `stat` when unchanged).
    static func defaultKeychain(of home: KeychainHome) -> String {
        (try? KeychainPreferences.load(home))?.defaultPath(home) ?? home.defaultKeychainPath
    }

    /// The path that names the keychain the alias `alias` names: its collection when it is a
    /// keychain of the home, else the alias itself (a default keychain elsewhere).
    static func aliasTarget(_ alias: String, keychain: String, home: KeychainHome) -> String {
        let collection = collectionPath(for: keychain)
        guard case .collection(let resolved, _)? = resolve(collection, home: home, defaultKeychain: keychain), resolved == keychain else {
            return aliasPrefix + alias
        }
        return collection
    }

    /// The collection path of a keychain of the home.
    static func collectionPath(for keychain: String) -> String {
        if isSession(keychain) { return sessionCollection }
        let file = keychain.split(separator: "/").last.map(String.init) ?? keychain
        let name = file.hasSuffix(".keychain-db") ? String(file.dropLast(".keychain-db".count)) : file
        return collectionPrefix + encode(name)
    }

    /// An item's path in its collection.
    static func itemPath(collection: String, reference: PersistentReference) -> String? {
        guard case .uuid(_, let id) = reference else { return nil }
        return collection + "/" + id.map { String(format2: $0) }.joined()
    }

    /// A keychain name as one path element: letters and digits as they are, any other byte as
    /// `_` and two hex digits. A keychain file named `session` is `_73ession`: the element
    /// `session` is the in-memory collection.
    static func encode(_ name: String) -> String {
        if name == sessionName { return "_" + String(format2: UInt8(ascii: "s")) + name.dropFirst() }
        var out = ""
        for byte in name.utf8 {
            switch byte {
            case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"):
                out.append(Character(UnicodeScalar(byte)))
            default:
                out += "_" + String(format2: byte)
            }
        }
        return out
    }

    static func decode(_ element: String) -> String? {
        var bytes: [UInt8] = []
        var iterator = Array(element.utf8).makeIterator()
        while let byte = iterator.next() {
            if byte == UInt8(ascii: "_") {
                guard let high = iterator.next(), let low = iterator.next(), let value = Self.bytes(fromHex: [high, low]) else { return nil }
                bytes += value
            } else {
                bytes.append(byte)
            }
        }
        guard !bytes.isEmpty, !bytes.contains(UInt8(ascii: "/")), let name = String(validating: bytes, as: UTF8.self),
              name != ".", name != ".." else { return nil }
        return name
    }

    static func bytes<S: Sequence>(fromHex text: S) -> [UInt8]? where S.Element == Character {
        bytes(fromHex: Array(String(text).utf8))
    }

    static func bytes(fromHex digits: [UInt8]) -> [UInt8]? {
        guard digits.count % 2 == 0 else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        var index = 0
        while index < digits.count {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}

extension String {
    /// Two lower-case hex digits.
    init(format2 byte: UInt8) {
        let digits = Array("0123456789abcdef")
        self = String([digits[Int(byte >> 4)], digits[Int(byte & 15)]])
    }
}

/// File existence without Foundation's FileManager (FoundationEssentials has none).
enum FileManagerLite {
    static func exists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    /// The `*.keychain-db` files of a folder.
    static func keychains(in folder: String) -> [String] {
        guard let directory = opendir(folder) else { return [] }
        defer { closedir(directory) }
        var names: [String] = []
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(cString: raw.baseAddress!.assumingMemoryBound(to: CChar.self))
            }
            if name.hasSuffix(".keychain-db"), !name.hasPrefix(".") { names.append(folder + "/" + name) }
        }
        return names.sorted()
    }
}
