import ArgumentParser
import FoundationEssentials
import KeychainModel

/// A four-character code option (`-c creator`, `-C type`, `-r protocol`, `-t auth type`).
struct FourCharacterCode: ExpressibleByArgument {
    let text: String
    init?(argument: String) {
        guard argument.utf8.count == 4 else { return nil }
        text = argument
    }
    /// As a number, big-endian, as Apple stores creator and type codes.
    var number: Int64 { text.utf8.reduce(Int64(0)) { $0 << 8 | Int64($1) } }
}

/// The attributes generic-password subcommands take, with security(1)'s letters.
struct GenericPasswordOptions: ParsableArguments {
    @Option(name: .customShort("a"), help: "The account.") var account: String?
    @Option(name: .customShort("s"), help: "The service.") var service: String?
    @Option(name: .customShort("l"), help: "The label.") var label: String?
    @Option(name: .customShort("j"), help: "The comment.") var comment: String?
    @Option(name: .customShort("D"), help: "The kind (description).") var kind: String?
    @Option(name: .customShort("c"), help: "The creator (four characters).") var creator: FourCharacterCode?
    @Option(name: .customShort("C"), help: "The type (four characters).") var type: FourCharacterCode?
    @Option(name: .customShort("G"), help: "The generic attribute.") var generic: String?
    @Option(name: .customLong("access-group"),
            help: "The access group (a Linux addition; -G is security(1)'s generic attribute here).") var accessGroup: String?

    var attributes: [String: AttributeValue] {
        var result: [String: AttributeValue] = [:]
        result[.account] = account.map(AttributeValue.string)
        result[.service] = service.map(AttributeValue.string)
        result[.label] = label.map(AttributeValue.string)
        result[.comment] = comment.map(AttributeValue.string)
        result[.description] = kind.map(AttributeValue.string)
        result[.creator] = creator.map { .number($0.number) }
        result[.type] = type.map { .number($0.number) }
        result[.generic] = generic.map(AttributeValue.string)
        result[.accessGroup] = accessGroup.map(AttributeValue.string)
        return result
    }
}

/// The attributes internet-password subcommands take, with security(1)'s letters.
struct InternetPasswordOptions: ParsableArguments {
    @Option(name: .customShort("a"), help: "The account.") var account: String?
    @Option(name: .customShort("s"), help: "The server.") var server: String?
    @Option(name: .customShort("d"), help: "The security domain.") var domain: String?
    @Option(name: .customShort("p"), help: "The path.") var path: String?
    @Option(name: .customShort("P"), help: "The port.") var port: UInt16?
    @Option(name: .customShort("r"), help: "The protocol (four characters: 'http', 'htps', 'ftp ', ...).") var protocolCode: FourCharacterCode?
    @Option(name: .customShort("t"), help: "The authentication type (four characters: 'dflt', 'form', ...).") var authenticationType: FourCharacterCode?
    @Option(name: .customShort("l"), help: "The label.") var label: String?
    @Option(name: .customShort("j"), help: "The comment.") var comment: String?
    @Option(name: .customShort("D"), help: "The kind (description).") var kind: String?
    @Option(name: .customShort("c"), help: "The creator (four characters).") var creator: FourCharacterCode?
    @Option(name: .customShort("C"), help: "The type (four characters).") var type: FourCharacterCode?
    @Option(name: [.customShort("G"), .customLong("access-group")], help: "The access group (a Linux addition).") var accessGroup: String?

    var attributes: [String: AttributeValue] {
        var result: [String: AttributeValue] = [:]
        result[.accessGroup] = accessGroup.map(AttributeValue.string)
        result[.account] = account.map(AttributeValue.string)
        result[.server] = server.map(AttributeValue.string)
        result[.securityDomain] = domain.map(AttributeValue.string)
        result[.path] = path.map(AttributeValue.string)
        result[.port] = port.map { .number(Int64($0)) }
        result[.protocol] = protocolCode.map { .string($0.text) }
        result[.authenticationType] = authenticationType.map { .string($0.text) }
        result[.label] = label.map(AttributeValue.string)
        result[.comment] = comment.map(AttributeValue.string)
        result[.description] = kind.map(AttributeValue.string)
        result[.creator] = creator.map { .number($0.number) }
        result[.type] = type.map { .number($0.number) }
        return result
    }
}

/// How a found item is shown: `-g` (password on standard error), `-w` (the password only), or
/// `--json`.
struct ShowOptions: ParsableArguments {
    @Flag(name: .customShort("g"), help: "Also show the password (on standard error).") var showPassword = false
    @Flag(name: .customShort("w"), help: "Show only the password.") var passwordOnly = false
    @Flag(name: .long, help: "Print JSON, for scripts.") var json = false

    var mode: ShowMode { ShowMode(showPassword: showPassword, passwordOnly: passwordOnly, json: json) }
}

/// How a found item is shown, as plain values (``ShowOptions`` once parsed, or ``QuickFind``).
struct ShowMode: Equatable, Sendable {
    var showPassword = false
    var passwordOnly = false
    var json = false

    var needsSecret: Bool { showPassword || passwordOnly }
}

/// security(1)'s access options on the commands that add items: which programs the new item trusts.
package struct AccessOptions: ParsableArguments {
    @Option(name: .customShort("T"), help: ArgumentHelp(
        "A program that may use the item without a prompt (repeat for more; '' for none, not even keyhaven; with '' among them, the others alone).",
        valueName: "program"))
    package var trustedApplications: [String] = []
    @Flag(name: .customShort("A"), help: "Any program may use the item without a prompt (not recommended).") package var anyApplication = false

    package init() {}

    /// The item's access object: keyhaven itself and each -T program, or with a `-T ''` among
    /// them the -T programs alone; every program with -A. Warns of a -T program in a folder the
    /// user can write.
    package var itemAccess: ItemAccess {
        if anyApplication { return ItemAccess(anyApplication: true) }
        let named = trustedApplications.filter { !$0.isEmpty }.map { path in
            TrustedApplication(path: path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path, digest: Data())
        }
        for application in named { if let warning = AccessLimits.writableFolderWarning(application.path) { printError(warning) } }
        // `-T ''`: not even keyhaven (nor, through it, the other keyhaven programs).
        let trustsCaller = !trustedApplications.contains("")
        return ItemAccess(applications: (trustsCaller ? [.caller] : []) + named)
    }
}
