import FoundationEssentials
import KeychainModel

/// security(1)'s item output, and JSON for scripts. Secrets appear only where asked for.
package enum ItemPrinter {
    static func print(_ item: StoredItem, keychain: String, show: ShowMode) {
        if show.json {
            printJSON([(keychain, item)], withSecrets: show.needsSecret)
            return
        }
        if show.passwordOnly {
            printLine(text(item.secret ?? Data()))
            return
        }
        printBlock(item, keychain: keychain, withSecret: false)
        if show.showPassword { printError("password: \"\(text(item.secret ?? Data()))\"") }
    }

    package static func printBlock(_ item: StoredItem, keychain: String, withSecret: Bool) {
        printLine("keychain: \"\(keychain)\"")
        printLine("class: \"\(item.itemClass.rawValue)\"")
        printLine("attributes:")
        for name in item.attributes.keys.sorted() where shown(name) {
            printLine("    \"\(name)\"\(render(item.attributes[name]!))")
        }
        if withSecret {
            printLine("data:")
            printLine("\"\(text(item.secret ?? Data()))\"")
        }
    }

    static func printJSON(_ items: [(String, StoredItem)], withSecrets: Bool) {
        let objects = items.map { keychain, item in
            JSONItem(keychain: keychain, class: item.itemClass.rawValue,
                     attributes: item.attributes.filter { shown($0.key) }.mapValues(JSONValue.init),
                     password: withSecrets ? item.secret.map(text) : nil)
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        if let data = try? encoder.encode(objects) { printLine(String(decoding: data, as: UTF8.self)) }
    }

    /// Keyhaven's own bookkeeping (the digest, the Secret Service attributes) is not shown.
    private static func shown(_ name: String) -> Bool {
        name != AttributeName.sha1.code && !SecretServiceAttributes.privateNames.contains(name)
    }

    /// `<blob>="text"`, `<uint32>=80`, `<timedate>="20261122031500Z"`.
    private static func render(_ value: AttributeValue) -> String {
        switch value {
        case .string(let s): return "<blob>=\"\(s)\""
        case .data(let d): return "<blob>=\(printable(d).map { "\"\($0)\"" } ?? hex(d))"
        case .number(let n): return "<uint32>=\(n)"
        case .date(let d): return "<timedate>=\"\(timestamp(d))\""
        }
    }

    /// UTF-8 text as is; anything else as `0x...` hex, as security(1) shows binary passwords.
    static func text(_ data: Data) -> String { String(data: data, encoding: .utf8) ?? hex(data) }

    /// Text with no control characters, else nil (shown as hex: never raw bytes on a terminal).
    private static func printable(_ data: Data) -> String? {
        guard let text = String(data: data, encoding: .utf8),
              !text.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else { return nil }
        return text
    }

    private static func hex(_ data: Data) -> String {
        let digits = Array("0123456789ABCDEF".utf8)
        return "0x" + String(decoding: data.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 0xF)]] }, as: UTF8.self)
    }

    private static func timestamp(_ date: Date) -> String {
        String(date.formatted(.iso8601).filter { !"-:T".contains($0) })
    }
}

private struct JSONItem: Encodable {
    let keychain: String
    let `class`: String
    let attributes: [String: JSONValue]
    let password: String?
}

private enum JSONValue: Encodable {
    case text(String), number(Int64)

    init(_ value: AttributeValue) {
        switch value {
        case .string(let s): self = .text(s)
        case .data(let d): self = .text(ItemPrinter.text(d))
        case .number(let n): self = .number(n)
        case .date(let d): self = .text(d.formatted(.iso8601))
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .text(let s): try container.encode(s)
        case .number(let n): try container.encode(n)
        }
    }
}
