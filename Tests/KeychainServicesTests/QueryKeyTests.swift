import Foundation
import KeychainServices
import KeychainTestSupport
import Testing

/// Apple's query keys, their fixed values and the class codes are spelt once: in the constants
/// Apple's headers declare (Generated/), and the class codes in the model's ItemClass. Code
/// elsewhere names them through those constants, so a misspelt key does not compile.
struct QueryKeyTests {
    /// Where a source spells a word that happens to be a code, meaning something else.
    static let otherMeanings: Set<String> = [
        "KeyhavenCLI/ImportCommand.swift \"cert\"",  // security(1)'s import -t cert
        "KeyhavenPKI/ImportItems+Work.swift \"keys\"",  // the word in a summary line
    ]

    /// Every value of a `kSec*` constant that is a query key, a key's fixed value or a class.
    static func codes() throws -> Set<String> {
        let generated = SourceTree.root + "/Sources/KeychainServices/Generated"
        var codes: Set<String> = []
        for file in try FileManager.default.contentsOfDirectory(atPath: generated) where file.hasSuffix(".swift") {
            let text = try String(contentsOfFile: generated + "/" + file, encoding: .utf8)
            for line in text.split(separator: "\n") {
                guard let name = line.split(separator: " ").first(where: { $0.hasPrefix("kSec") })?.dropLast(),
                      ["kSecClass", "kSecMatch", "kSecReturn", "kSecValue", "kSecUse"].contains(where: { name.hasPrefix($0) })
                        || name == "kSecAttrSynchronizableAny" || name.hasPrefix("kSecDataInetExtra") else { continue }
                let pieces = line.split(separator: "\"")
                if pieces.count >= 2 { codes.insert(String(pieces[1])) }
            }
        }
        return codes
    }

    @Test("The codes read from Apple's constants include the keys the mirror builds dictionaries with")
    func codesAreRead() throws {
        let codes = try Self.codes()
        for code in ["class", "idnt", "genp", "keys", "cert", "m_Limit", "m_LimitAll", "r_Data", "r_Ref", "v_Ref", "v_Data", "v_PersistentRef", "u_Keychain", "u_AuthUI", "syna", "binn"] {
            #expect(codes.contains(code), "\(code)")
        }
    }

    @Test("No source file but Apple's generated constants, ItemClass.swift and AttributeName.swift spells a query key, a key's fixed value or a class code")
    func codesAreSaidOnce() throws {
        let codes = try Self.codes()
        #expect(try SourceTree.sourceFiles().count > 300)
        // kSecUseDataProtectionKeychain is the stored attribute `nleg`, said in AttributeName.swift.
        let sayers = ["KeychainModel/Model/ItemClass.swift", "KeychainModel/Model/AttributeName.swift", "KeychainServices/Generated/"]
        let found = try SourceTree.linesSpelling(codes, outside: sayers, otherMeanings: Self.otherMeanings)
        #expect(found.isEmpty, "say these through QueryKey, Apple's kSec constants or ItemClass: \(found.joined(separator: "\n"))")
    }
}
