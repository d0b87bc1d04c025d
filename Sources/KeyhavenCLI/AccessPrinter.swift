import FoundationEssentials
import KeychainModel
import KeyhavenAgentClient

/// How `keyhaven access list` shows access objects and grants.
///
/// Text, per item: `keychain: "PATH"`, `class: "genp"`, `label`/`service`/`account` when set, then
/// `access: any application`, `access: no application`, or `access:` followed by one line per
/// trusted program, `    "PATH" sha256:HEX`. Per grant: `application: "PATH" sha256:HEX`, then
/// `    group: "NAME"` per group. `--json`: the same as objects.
enum AccessPrinter {
    static func print(_ items: [(String, StoredItem)], json: Bool) {
        if json {
            emit(items.map { keychain, item in
                JSONAccessItem(keychain: keychain, class: item.itemClass.rawValue, label: text(item, .label),
                               service: text(item, .service) ?? text(item, .server), account: text(item, .account),
                               anyApplication: item.access.map(\.anyApplication) ?? true,
                               applications: (item.access?.applications ?? []).map(JSONApplication.init))
            })
            return
        }
        for (keychain, item) in items {
            printLine("keychain: \"\(keychain)\"")
            printLine("class: \"\(item.itemClass.rawValue)\"")
            for (name, key) in [("label", AttributeName.label), ("service", .service), ("server", .server), ("account", .account)] {
                if let value = text(item, key) { printLine("\(name): \"\(value)\"") }
            }
            switch item.access {
            case nil: printLine("access: any application")
            case let access? where access.anyApplication: printLine("access: any application")
            case let access? where access.applications.isEmpty: printLine("access: no application")
            case let access?:
                printLine("access:")
                for application in access.applications { printLine("    \"\(application.path)\" sha256:\(application.digest.hexString)") }
            }
        }
    }

    static func print(_ grants: [ApplicationGrant], json: Bool) {
        if json {
            emit(grants.map { JSONGrant(application: JSONApplication($0.application), groups: $0.groups) })
            return
        }
        for grant in grants {
            printLine("application: \"\(grant.application.path)\" sha256:\(grant.application.digest.hexString)")
            for group in grant.groups { printLine("    group: \"\(group)\"") }
        }
    }

    private static func text(_ item: StoredItem, _ key: AttributeName) -> String? {
        if case .string(let value)? = item.attributes[key] { return value }
        return nil
    }

    private static func emit(_ value: some Encodable) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        if let data = try? encoder.encode(value) { printLine(String(decoding: data, as: UTF8.self)) }
    }

    private struct JSONApplication: Encodable {
        let path: String
        let sha256: String
        init(_ application: TrustedApplication) {
            path = application.path
            sha256 = application.digest.hexString
        }
    }

    private struct JSONAccessItem: Encodable {
        let keychain: String, `class`: String
        let label: String?, service: String?, account: String?
        let anyApplication: Bool
        let applications: [JSONApplication]
    }

    private struct JSONGrant: Encodable {
        let application: JSONApplication
        let groups: [String]
    }
}
