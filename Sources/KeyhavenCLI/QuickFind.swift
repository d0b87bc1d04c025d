import ArgumentParser
import FoundationEssentials
import KeychainModel

/// `find-generic-password` and `find-internet-password` read without ArgumentParser, for the
/// plain command lines scripts run in loops (`-a NAME -s NAME -w KEYCHAIN`).
///
/// ArgumentParser's parse of one subcommand is most of a lookup's time (docs/benchmarks.md,
/// "The command"): it builds the command's argument tree by reflection (run-time type and conformance look-ups). This
/// reader accepts only separate options with plain values, the flags `-g`, `-w` and `--json`,
/// and keychain names; anything else (help, `--`, combined flags, a repeated option, a value
/// that starts with `-`, a malformed code or port) returns nil and ArgumentParser reads the
/// command as before, errors included. A test checks that whatever this reader accepts,
/// ArgumentParser reads the same way.
struct QuickFind: Equatable {
    let itemClass: ItemClass
    var attributes: [String: AttributeValue] = [:]
    var show = ShowMode()
    var keychains: [String] = []

    /// The attribute of each option letter that takes a value, by subcommand.
    private static let valueOptions: [String: (ItemClass, [String: String])] = [
        "find-generic-password": (.genericPassword, [
            "-a": AttributeName.account.code, "-s": AttributeName.service.code, "-l": AttributeName.label.code, "-j": AttributeName.comment.code, "-D": AttributeName.description.code, "-c": AttributeName.creator.code, "-C": AttributeName.type.code, "-G": AttributeName.generic.code,
        ]),
        "find-internet-password": (.internetPassword, [
            "-a": AttributeName.account.code, "-s": AttributeName.server.code, "-d": AttributeName.securityDomain.code, "-p": AttributeName.path.code, "-P": AttributeName.port.code, "-r": AttributeName.protocol.code, "-t": AttributeName.authenticationType.code,
            "-l": AttributeName.label.code, "-j": AttributeName.comment.code, "-D": AttributeName.description.code, "-c": AttributeName.creator.code, "-C": AttributeName.type.code,
        ]),
    ]

    init(itemClass: ItemClass, attributes: [String: AttributeValue], show: ShowMode, keychains: [String]) {
        (self.itemClass, self.attributes, self.show, self.keychains) = (itemClass, attributes, show, keychains)
    }

    /// The command line (subcommand first) if this reader takes it whole; nil otherwise.
    init?(_ arguments: [String]) {
        guard let name = arguments.first, let (itemClass, options) = Self.valueOptions[name] else { return nil }
        self.itemClass = itemClass
        var seen: Set<String> = []
        var index = 1
        while index < arguments.count {
            let argument = arguments[index]
            index += 1
            guard argument.hasPrefix("-") else {
                keychains.append(argument)
                continue
            }
            guard seen.insert(argument).inserted else { return nil }
            switch argument {
            case "-g": show.showPassword = true
            case "-w": show.passwordOnly = true
            case "--json": show.json = true
            default:
                guard let attribute = options[argument], index < arguments.count else { return nil }
                let value = arguments[index]
                index += 1
                guard !value.hasPrefix("-"), let converted = Self.value(value, for: attribute, in: itemClass) else { return nil }
                attributes[attribute] = converted
            }
        }
    }

    /// An option's value as the ArgumentParser options convert it (``GenericPasswordOptions``,
    /// ``InternetPasswordOptions``); nil where they would refuse it.
    private static func value(_ text: String, for attribute: String, in itemClass: ItemClass) -> AttributeValue? {
        switch attribute {
        case AttributeName.creator.code, AttributeName.type.code:
            return FourCharacterCode(argument: text).map { .number($0.number) }
        case AttributeName.protocol.code, AttributeName.authenticationType.code:
            return FourCharacterCode(argument: text).map { .string($0.text) }
        case AttributeName.port.code:
            return UInt16(text).map { .number(Int64($0)) }
        default:
            return .string(text)
        }
    }

    /// Runs the lookup as `FindPassword` does, then exits with its status.
    func run() -> Never {
        do {
            try perform("SecKeychainSearchCopyNext") { () throws(StoreError) in
                try ItemWork.find(itemClass, attributes, keychains: keychains, show: show)
            }
        } catch {
            KeyhavenCommand.exit(withError: error)
        }
        KeyhavenCommand.exit()
    }
}
