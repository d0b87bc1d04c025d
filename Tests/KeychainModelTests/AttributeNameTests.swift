import Foundation
import KeychainModel
import KeychainTestSupport
import Testing

/// Attribute names are said once, in AttributeName.swift, and protection classes in KeyClass.swift:
/// the schema and Apple's constants name only those, and no other source file spells a code.
struct AttributeNameTests {
    /// Where a source spells a four-letter word that happens to be a code, meaning something else.
    static let otherMeanings: Set<String> = [
        "KeychainAccessCore/SyncSummary.swift \"sync\"",  // the keyhaven command's sync
        "KeychainKeys/KeyAlgorithm.swift \"sign\"",  // an algorithm's operation in Apple's algid string
        "KeyhavenCLI/ImportCommand.swift \"priv\"",  // security(1)'s import -t priv
        "KeyhavenCLI/SSHCommand.swift \"type\"",  // the --type option
        "KeyhavenCLI/SSHCommand.swift \"sync\"",  // the --sync option
        "KeyhavenCLI/SyncCommands.swift \"sync\"",  // the sync subcommand
        "KeychainStore/Database/KeychainDatabase+Rows.swift \"tomb\"",  // a table column
        "KeyhavenCLI/GitCredential.swift \"path\"",  // git's credential field
    ]

    @Test("Each name has its own four-letter code, and every attribute of every class's schema is one of them")
    func namesCoverTheSchema() {
        let codes = AttributeName.all.map(\.code)
        #expect(Set(codes).count == codes.count)
        #expect(codes.allSatisfy { $0.utf8.count == 4 })
        for itemClass in [ItemClass.genericPassword, .internetPassword, .key, .certificate] {
            for attribute in itemClass.schema.attributes {
                #expect(codes.contains(attribute.name), "\(itemClass)'s \(attribute.name) has no AttributeName")
            }
        }
    }

    @Test("Every kSecAttr constant that names an attribute (not one of an attribute's values) is an AttributeName's code")
    func namesCoverApplesConstants() throws {
        let text = try String(contentsOfFile: SourceTree.root + "/Sources/KeychainServices/Generated/SecItemConstants.swift", encoding: .utf8)
        var constants: [(name: String, value: String)] = []
        for line in text.split(separator: "\n") where line.contains("let kSecAttr") {
            let pieces = line.split(separator: "\"")
            guard let declared = line.split(separator: " ").first(where: { $0.hasPrefix("kSecAttr") }), pieces.count >= 2 else { continue }
            constants.append((String(declared.dropLast()), String(pieces[1])))
        }
        // kSecAttrProtocolHTTP is a value of kSecAttrProtocol: a constant whose name extends
        // another's is one of its values.
        let keys = constants.filter { constant in !constants.contains { constant.name != $0.name && constant.name.hasPrefix($0.name) } }
        let codes = Set(AttributeName.all.map(\.code))
        let fourLetter = keys.filter { $0.value.utf8.count == 4 && $0.value != "UUID" && !$0.value.allSatisfy(\.isNumber) }
        #expect(fourLetter.count > 60)
        for key in fourLetter { #expect(codes.contains(key.value), "\(key.name) is \(key.value)") }
    }

    @Test("No source file but AttributeName.swift, KeyClass.swift and Apple's generated constants spells an attribute's or a class's code")
    func codesAreSaidOnce() throws {
        let codes = Set(AttributeName.all.map(\.code) + KeyClass.allCases.map(\.rawValue))
        #expect(try SourceTree.sourceFiles().count > 300)
        // Keyhaven/Accessibility.swift is the Swift API's enum, whose raw values are the codes.
        let sayers = ["KeychainModel/Model/AttributeName.swift", "KeychainModel/Model/KeyClass.swift", "Keyhaven/Accessibility.swift", "KeychainServices/Generated/"]
        let found = try SourceTree.linesSpelling(codes, outside: sayers, otherMeanings: Self.otherMeanings)
        #expect(found.isEmpty, "say these through AttributeName or KeyClass: \(found.joined(separator: "\n"))")
    }
}
