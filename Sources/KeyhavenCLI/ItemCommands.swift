import ArgumentParser
import FoundationEssentials
import KeychainModel
import KeyhavenAgentClient

/// The shared work of the add/find/delete password subcommands.
enum ItemWork {
    static func add(_ itemClass: ItemClass, _ attributes: [String: AttributeValue], password: String?, update: Bool,
                    keychain: String?, access: ItemAccess) throws(StoreError) {
        let session = try Session.open()
        var secret = try PasswordInput.resolve(password, prompt: "password data for new item: ") ?? []
        defer { zeroize(&secret) }
        let path = try session.path(keychain)
        let item = NewItem(itemClass: itemClass, attributes: attributes, secret: Data(secret), access: access)
        do throws(StoreError) {
            try session.send(.add(keychain: path, item: item, caller: session.caller))
        } catch where error.code == .duplicateItem && update {
            var query = ItemQuery(itemClass: itemClass)
            query.criteria = attributes.filter { itemClass.schema[$0.key]?.isPrimaryKey == true }
            var changes = ItemChanges()
            changes.attributes = attributes
            changes.secret = Data(secret)
            try session.send(.update(keychains: [path], query: query, changes: changes, caller: session.caller))
        }
    }

    /// The first matching item and the keychain it is in (``KeychainSearch``, as the library
    /// searches).
    static func findFirst(_ itemClass: ItemClass, _ attributes: [String: AttributeValue], keychains: [String],
                          withSecret: Bool, session: Session) throws(StoreError) -> (String, StoredItem) {
        var query = ItemQuery(itemClass: itemClass)
        query.criteria = attributes
        query.matchAnySynchronizable = true
        let found = try KeychainSearch.find(query, in: session.keychains(try session.searchPaths(keychains)),
                                            caller: session.caller, withSecrets: withSecret)
        return (found[0].keychain.path, found[0].item)
    }

    static func find(_ itemClass: ItemClass, _ attributes: [String: AttributeValue], keychains: [String],
                     show: ShowMode) throws(StoreError) {
        let session = try Session.open()
        let (path, item) = try findFirst(itemClass, attributes, keychains: keychains, withSecret: show.needsSecret, session: session)
        ItemPrinter.print(item, keychain: path, show: show)
    }

    static func delete(_ itemClass: ItemClass, _ attributes: [String: AttributeValue], keychains: [String]) throws(StoreError) {
        let session = try Session.open()
        let (path, item) = try findFirst(itemClass, attributes, keychains: keychains, withSecret: false, session: session)
        var query = ItemQuery(itemClass: itemClass)
        query.persistentReference = item.persistentReference
        try session.send(.delete(keychains: [path], query: query, caller: session.caller, makeTombstones: false))
        ItemPrinter.printBlock(item, keychain: path, withSecret: false)
        printLine("password has been deleted.")
    }
}

/// The options of one class of password item (generic or internet).
protocol PasswordItemOptions: ParsableArguments {
    static var itemClass: ItemClass { get }
    /// "generic" or "internet", as in the subcommands' names.
    static var noun: String { get }
    var attributes: [String: AttributeValue] { get }
}

extension GenericPasswordOptions: PasswordItemOptions {
    static var itemClass: ItemClass { .genericPassword }
    static var noun: String { "generic" }
}

extension InternetPasswordOptions: PasswordItemOptions {
    static var itemClass: ItemClass { .internetPassword }
    static var noun: String { "internet" }
}

/// `add-generic-password` and `add-internet-password`.
struct AddPassword<Options: PasswordItemOptions>: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "add-\(Options.noun)-password", abstract: "Add \(Options.noun == "internet" ? "an" : "a") \(Options.noun) password.").underKeyhaven
    }
    @OptionGroup var item: Options
    @Option(name: .customShort("w"), help: "The password (as the last option without a value: asked for; '-': standard input).")
    var password: String?
    @Flag(name: .customShort("U"), help: "Update the item if it exists.") var update = false
    @OptionGroup var access: AccessOptions
    @Argument(help: "The keychain (default: the default keychain).") var keychain: String?

    func run() throws {
        try perform("SecKeychainItemCreateFromContent") { () throws(StoreError) in
            try ItemWork.add(Options.itemClass, item.attributes, password: password, update: update, keychain: keychain,
                             access: access.itemAccess)
        }
    }
}

/// `find-generic-password` and `find-internet-password`.
struct FindPassword<Options: PasswordItemOptions>: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "find-\(Options.noun)-password", abstract: "Find \(Options.noun == "internet" ? "an" : "a") \(Options.noun) password.").underKeyhaven
    }
    @OptionGroup var item: Options
    @OptionGroup var show: ShowOptions
    @Argument(help: "The keychains to search (default: the search list).") var keychains: [String] = []

    func run() throws {
        try perform("SecKeychainSearchCopyNext") { () throws(StoreError) in
            try ItemWork.find(Options.itemClass, item.attributes, keychains: keychains, show: show.mode)
        }
    }
}

/// `delete-generic-password` and `delete-internet-password`.
struct DeletePassword<Options: PasswordItemOptions>: ParsableCommand {
    static var configuration: CommandConfiguration {
        CommandConfiguration(commandName: "delete-\(Options.noun)-password", abstract: "Delete the first matching \(Options.noun) password.").underKeyhaven
    }
    @OptionGroup var item: Options
    @Argument(help: "The keychains to search (default: the search list).") var keychains: [String] = []

    func run() throws {
        try perform("SecKeychainSearchCopyNext") { () throws(StoreError) in
            try ItemWork.delete(Options.itemClass, item.attributes, keychains: keychains)
        }
    }
}

struct DumpKeychain: ParsableCommand {
    /// The items of one query; with their data, asking once for those keyhaven is not trusted
    /// with, and listing those without their data when that fails (counted in `withheld`).
    static func items(_ query: ItemQuery, in path: String, withSecrets: Bool, session: Session,
                      withheld: inout Int) throws(StoreError) -> [StoredItem] {
        guard withSecrets else { return try session.send(.find(keychains: [path], query: query, caller: session.caller, withSecrets: false)).items() }
        do throws(StoreError) {
            return try session.send(.find(keychains: [path], query: query, caller: session.caller, withSecrets: true)).items()
        } catch where [.interactionNotAllowed, .authFailed, .userCanceled].contains(error.code) {
            var quiet = session.caller
            quiet.interactionAllowed = false
            quiet.skipsUntrusted = true
            let all = try session.send(.find(keychains: [path], query: query, caller: session.caller, withSecrets: false)).items()
            let shown = try session.items(matching: query, in: path, caller: quiet, withSecrets: true)
            let open = Dictionary(shown.map { ($0.persistentReference, $0) }, uniquingKeysWith: { first, _ in first })
            withheld += all.count - open.count
            return all.map { open[$0.persistentReference] ?? $0 }
        }
    }


    static let configuration = CommandConfiguration(commandName: "dump-keychain",
                                                    abstract: "List every item: passwords, keys and certificates.").underKeyhaven
    @Flag(name: .customShort("d"), help: "Also show each password's and certificate's data (never a key's).") var data = false
    @Flag(name: .long, help: "Print JSON, for scripts.") var json = false
    @Argument(help: "The keychains (default: the search list).") var keychains: [String] = []

    func run() throws {
        try perform("SecKeychainItemCopyContent") { () throws(StoreError) in
            let session = try Session.open()
            var listed: [(String, StoredItem)] = []
            var withheld = 0
            for path in try session.searchPaths(keychains) {
                for itemClass in ItemClass.allCases {
                    var query = ItemQuery(itemClass: itemClass)
                    query.limit = nil
                    query.matchAnySynchronizable = true
                    do throws(StoreError) {
                        // A key's material is never listed, -d or not.
                        let withSecrets = data && itemClass != .key
                        let items = try Self.items(query, in: path, withSecrets: withSecrets, session: session, withheld: &withheld)
                        listed += items.map { (path, $0) }
                    } catch where error.code == .itemNotFound {
                        continue
                    }
                }
            }
            if withheld > 0 {
                printError("keyhaven: the data of \(withheld) item\(withheld == 1 ? " is" : "s are") not shown: "
                           + "this program is not trusted with \(withheld == 1 ? "it" : "them") and the prompt was not answered")
            }
            if json {
                ItemPrinter.printJSON(listed, withSecrets: data)
            } else {
                for (path, item) in listed { ItemPrinter.printBlock(item, keychain: path, withSecret: data) }
            }
        }
    }
}
