import ArgumentParser
import FoundationEssentials
import KeychainStore
import KeyhavenAgentClient

/// The shared work of the add/find/delete password subcommands.
enum ItemWork {
    static func add(_ itemClass: ItemClass, _ attributes: [String: AttributeValue], password: String?, update: Bool,
                    keychain: String?) throws(StoreError) {
        let session = try Session.open()
        var secret = try PasswordInput.resolve(password, prompt: "password data for new item: ") ?? []
        defer { zeroize(&secret) }
        let path = try session.path(keychain)
        let item = NewItem(itemClass: itemClass, attributes: attributes, secret: Data(secret))
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

    /// The first matching item and the keychain it is in.
    static func findFirst(_ itemClass: ItemClass, _ attributes: [String: AttributeValue], keychains: [String],
                          withSecret: Bool, session: Session) throws(StoreError) -> (String, StoredItem) {
        var query = ItemQuery(itemClass: itemClass)
        query.criteria = attributes
        query.matchAnySynchronizable = true
        var firstError: StoreError?
        for path in try session.searchPaths(keychains) {
            do throws(StoreError) {
                let response = try session.send(.find(keychains: [path], query: query, caller: session.caller, withSecrets: withSecret))
                if let item = response.items?.first { return (path, item) }
            } catch where error.code == .itemNotFound {
                continue
            } catch {
                firstError = firstError ?? error
            }
        }
        throw firstError ?? StoreError(.itemNotFound, "no item matched")
    }

    static func find(_ itemClass: ItemClass, _ attributes: [String: AttributeValue], keychains: [String],
                     show: ShowOptions) throws(StoreError) {
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

struct AddGenericPassword: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add-generic-password", abstract: "Add a generic password.")
    @OptionGroup var item: GenericPasswordOptions
    @Option(name: .customShort("w"), help: "The password (as the last option without a value: asked for; '-': standard input).")
    var password: String?
    @Flag(name: .customShort("U"), help: "Update the item if it exists.") var update = false
    @Argument(help: "The keychain (default: the default keychain).") var keychain: String?

    func run() throws {
        try perform("SecKeychainItemCreateFromContent") { () throws(StoreError) in
            try ItemWork.add(.genericPassword, item.attributes, password: password, update: update, keychain: keychain)
        }
    }
}

struct FindGenericPassword: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "find-generic-password", abstract: "Find a generic password.")
    @OptionGroup var item: GenericPasswordOptions
    @OptionGroup var show: ShowOptions
    @Argument(help: "The keychains to search (default: the search list).") var keychains: [String] = []

    func run() throws {
        try perform("SecKeychainSearchCopyNext") { () throws(StoreError) in
            try ItemWork.find(.genericPassword, item.attributes, keychains: keychains, show: show)
        }
    }
}

struct DeleteGenericPassword: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete-generic-password", abstract: "Delete the first matching generic password.")
    @OptionGroup var item: GenericPasswordOptions
    @Argument(help: "The keychains to search (default: the search list).") var keychains: [String] = []

    func run() throws {
        try perform("SecKeychainSearchCopyNext") { () throws(StoreError) in
            try ItemWork.delete(.genericPassword, item.attributes, keychains: keychains)
        }
    }
}

struct AddInternetPassword: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "add-internet-password", abstract: "Add an internet password.")
    @OptionGroup var item: InternetPasswordOptions
    @Option(name: .customShort("w"), help: "The password (as the last option without a value: asked for; '-': standard input).")
    var password: String?
    @Flag(name: .customShort("U"), help: "Update the item if it exists.") var update = false
    @Argument(help: "The keychain (default: the default keychain).") var keychain: String?

    func run() throws {
        try perform("SecKeychainItemCreateFromContent") { () throws(StoreError) in
            try ItemWork.add(.internetPassword, item.attributes, password: password, update: update, keychain: keychain)
        }
    }
}

struct FindInternetPassword: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "find-internet-password", abstract: "Find an internet password.")
    @OptionGroup var item: InternetPasswordOptions
    @OptionGroup var show: ShowOptions
    @Argument(help: "The keychains to search (default: the search list).") var keychains: [String] = []

    func run() throws {
        try perform("SecKeychainSearchCopyNext") { () throws(StoreError) in
            try ItemWork.find(.internetPassword, item.attributes, keychains: keychains, show: show)
        }
    }
}

struct DeleteInternetPassword: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "delete-internet-password", abstract: "Delete the first matching internet password.")
    @OptionGroup var item: InternetPasswordOptions
    @Argument(help: "The keychains to search (default: the search list).") var keychains: [String] = []

    func run() throws {
        try perform("SecKeychainSearchCopyNext") { () throws(StoreError) in
            try ItemWork.delete(.internetPassword, item.attributes, keychains: keychains)
        }
    }
}

struct DumpKeychain: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dump-keychain", abstract: "List every password item.")
    @Flag(name: .customShort("d"), help: "Also show each item's password.") var data = false
    @Flag(name: .long, help: "Print JSON, for scripts.") var json = false
    @Argument(help: "The keychains (default: the search list).") var keychains: [String] = []

    func run() throws {
        try perform("SecKeychainItemCopyContent") { () throws(StoreError) in
            let session = try Session.open()
            var listed: [(String, StoredItem)] = []
            for path in try session.searchPaths(keychains) {
                for itemClass in ItemClass.allCases {
                    var query = ItemQuery(itemClass: itemClass)
                    query.limit = nil
                    query.matchAnySynchronizable = true
                    do throws(StoreError) {
                        let items = try session.send(.find(keychains: [path], query: query, caller: session.caller, withSecrets: data)).items ?? []
                        listed += items.map { (path, $0) }
                    } catch where error.code == .itemNotFound {
                        continue
                    }
                }
            }
            if json {
                ItemPrinter.printJSON(listed, withSecrets: data)
            } else {
                for (path, item) in listed { ItemPrinter.printBlock(item, keychain: path, withSecret: data) }
            }
        }
    }
}
