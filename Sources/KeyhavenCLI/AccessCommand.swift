import ArgumentParser
import FoundationEssentials
import KeychainModel
import KeyhavenAgentClient

/// `keyhaven access list|grant|revoke`: which programs may use an item's secret without a prompt
/// (its access object), and which access groups a program may use (docs/access.md).
struct AccessCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "access",
        abstract: "Show and change which programs may use items, and which access groups a program may use.",
        discussion: """
            Changes need the keychain's password when it has one (-p without a value or with '-': asked for, \
            or read from standard input). Programs are named by path; the agent identifies a program by the \
            SHA-256 of its file, or by its path when the user cannot modify it (owned by root in folders only \
            root can write).
            """,
        subcommands: [Limits.self, List.self, Grant.self, Revoke.self], defaultSubcommand: Limits.self)

    struct Limits: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Say what per-application access cannot stop on this machine, and what to do about it (the default).")
        func run() throws {
            printLine("Per-application access: the agent gives an item's secret only to the programs it trusts, identified "
                      + "by the kernel (docs/access.md).")
            for line in AccessLimits.kernelReport(scope: AccessLimits.ptraceScope()) { printLine(line) }
        }
    }

    /// Which items: a class and the attributes security(1)'s letters name.
    struct ItemFilter: ParsableArguments {
        @Option(name: .customShort("c"), help: "The item class: genp (generic passwords, the default), inet, keys, cert.")
        var itemClass: String = ItemClass.genericPassword.rawValue
        @Option(name: .customShort("s"), help: "The service (generic) or server (internet).") var service: String?
        @Option(name: .customShort("a"), help: "The account.") var account: String?
        @Option(name: .customShort("l"), help: "The label.") var label: String?

        var query: ItemQuery {
            get throws(StoreError) {
                guard let itemClass = ItemClass(rawValue: itemClass) else {
                    throw StoreError(.invalidParameter, "-c takes genp, inet, keys or cert")
                }
                var query = ItemQuery(itemClass: itemClass)
                query.limit = nil
                query.matchAnySynchronizable = true
                query.criteria[.account] = account.map(AttributeValue.string)
                query.criteria[itemClass == .internetPassword ? AttributeName.server.code : AttributeName.service.code] = service.map(AttributeValue.string)
                query.criteria[.label] = label.map(AttributeValue.string)
                return query
            }
        }

        var isEmpty: Bool { service == nil && account == nil && label == nil }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "List items with the programs they trust, or (--groups) the access groups granted to programs.")
        @OptionGroup var filter: ItemFilter
        @Flag(name: .long, help: "List the access groups granted to programs instead.") var groups = false
        @Flag(name: .long, help: "Print JSON, for scripts.") var json = false
        @Argument(help: "The keychains (default: the search list).") var keychains: [String] = []

        func run() throws {
            try perform("SecAccessCopyACLList") { () throws(StoreError) in
                let session = try Session.open()
                if groups {
                    AccessPrinter.print(try session.send(.grants(change: nil, password: nil)).grants(), json: json)
                    return
                }
                var listed: [(String, StoredItem)] = []
                for path in try session.searchPaths(keychains) {
                    do throws(StoreError) {
                        let items = try session.send(.find(keychains: [path], query: try filter.query, caller: session.caller,
                                                           withSecrets: false)).items()
                        listed += items.map { (path, $0) }
                    } catch where error.code == .itemNotFound {
                        continue
                    }
                }
                guard !listed.isEmpty else { throw StoreError(.itemNotFound, "no item matched") }
                AccessPrinter.print(listed, json: json)
                let programs = Set(listed.flatMap { $0.1.access?.applications.map(\.path) ?? [] })
                for program in programs.sorted() { if let warning = AccessLimits.writableFolderWarning(program) { printError(warning) } }
            }
        }
    }

    /// What `grant` and `revoke` take.
    struct ChangeOptions: ParsableArguments {
        @OptionGroup var filter: ItemFilter
        @Option(name: .customShort("T"), help: ArgumentHelp("A program (repeat for more).", valueName: "program"))
        var programs: [String] = []
        @Flag(name: .customShort("A"), help: "grant: any program may use the matching items; revoke: only the programs they list.")
        var anyApplication = false
        @Option(name: .customShort("G"), help: ArgumentHelp("An access group of the one -T program (repeat for more; '*': every group).",
                                                            valueName: "group"))
        var groups: [String] = []
        @Option(name: .customShort("p"), help: "The keychain's password ('-': standard input; asked for when needed).") var password: String?
        @Argument(help: "The keychains (default: the search list; grants are kept in the default keychain).") var keychains: [String] = []

        func apply(revoke: Bool) throws {
            try perform("SecKeychainItemSetAccess") { () throws(StoreError) in
                try AccessChanges(filter: filter, programs: programs, groups: groups, password: password, keychains: keychains)
                    .apply(revoke: revoke, anyApplication: anyApplication)
            }
        }
    }

    struct Grant: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Trust programs with the matching items (-T), open them to every program (-A), or grant a program access groups (-G).")
        @OptionGroup var options: ChangeOptions
        func run() throws { try options.apply(revoke: false) }
    }

    struct Revoke: ParsableCommand {
        static let configuration = CommandConfiguration(
            abstract: "Trust programs with the matching items no more (-T; -A: close them to programs they do not list), or take access groups back (-G).")
        @OptionGroup var options: ChangeOptions
        func run() throws { try options.apply(revoke: true) }
    }
}

/// The work of `access grant` and `access revoke`.
struct AccessChanges {
    let filter: AccessCommand.ItemFilter
    let programs: [String]
    let groups: [String]
    let password: String?
    let keychains: [String]

    func apply(revoke: Bool, anyApplication: Bool) throws(StoreError) {
        let session = try Session.open()
        let paths = programs.map { $0.hasPrefix("/") ? $0 : FileManager.default.currentDirectoryPath + "/" + $0 }
        if !revoke { for path in paths { if let warning = AccessLimits.writableFolderWarning(path) { printError(warning) } } }
        if !groups.isEmpty {
            guard paths.count == 1, filter.isEmpty, !anyApplication else {
                throw StoreError(.invalidParameter, "-G takes exactly one -T program, and no item options")
            }
            var secret = try self.secret(for: session.home.defaultKeychainPath, session: session)
            defer { if secret != nil { zeroize(&secret!) } }
            let change = GrantChange(application: paths[0], groups: groups, revoke: revoke)
            AccessPrinter.print(try session.send(.grants(change: change, password: secret.map { Data($0) })).grants(), json: false)
            return
        }
        guard !paths.isEmpty || anyApplication else { throw StoreError(.invalidParameter, "name a program with -T, or give -A or -G") }
        let change = revoke ? AccessChange(untrust: paths, anyApplication: anyApplication ? false : nil)
                            : AccessChange(trust: paths, anyApplication: anyApplication ? true : nil)
        var changed = 0
        for path in try session.searchPaths(keychains) {
            var secret = try self.secret(for: path, session: session)
            defer { if secret != nil { zeroize(&secret!) } }
            do throws(StoreError) {
                changed += try session.send(.setAccess(keychains: [path], query: try filter.query, change: change,
                                                       password: secret.map { Data($0) })).count()
            } catch where error.code == .itemNotFound {
                continue
            }
        }
        printLine("\(changed) item\(changed == 1 ? "" : "s") changed.")
    }

    /// The keychain's password when it has one: given, from standard input, or asked for.
    private func secret(for keychain: String, session: Session) throws(StoreError) -> [UInt8]? {
        guard try session.send(.status(keychain: keychain)).status().hasPassword else { return nil }
        let name = keychain.split(separator: "/").last.map(String.init) ?? keychain
        return try PasswordInput.resolveOrAsk(password, prompt: "password of keychain \"\(name)\": ")
    }
}
