#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainModel
import KeyhavenAgentClient

/// `git-credential-keyhaven get|store|erase`: git's credential helper protocol over the keychain,
/// as git-credential-osxkeychain does it on a Mac. Each credential is an internet password:
/// server = the host, protocol (`htps`, `http`, ...), port (the protocol's default when git names
/// none, so `https://host` and `https://host:8443` are two credentials), path when git gives it,
/// account = the user name. The items trust this helper (no other program reads them without a prompt)
/// and live in its own access group.
package struct GitCredential: Equatable, Sendable {
    package var fields: [String: String] = [:]

    /// The largest input read: git's requests are a few lines.
    static let maximumInput = 1 << 20

    package init(fields: [String: String] = [:]) { self.fields = fields }

    /// Reads `key=value` lines up to a blank line or the end.
    package init(parsing bytes: [UInt8]) throws(StoreError) {
        guard bytes.count <= Self.maximumInput else { throw StoreError(.dataTooLarge, "the credential is larger than 1 MiB") }
        for line in bytes.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            let text = String(decoding: line.last == UInt8(ascii: "\r") ? line.dropLast() : line[...], as: UTF8.self)
            if text.isEmpty { break }
            guard !text.contains("\u{0}"), let equals = text.firstIndex(of: "=") else {
                throw StoreError(.invalidParameter, "a line of the credential is not key=value")
            }
            let key = String(text[..<equals])
            if key.hasSuffix("[]") { continue }  // capability[], wwwauth[]: not kept
            fields[key] = String(text[text.index(after: equals)...])
        }
    }

    /// The attributes that name the credential's item (what git gave).
    var criteria: [String: AttributeValue] {
        get throws(StoreError) {
            guard let scheme = fields["protocol"], let code = InternetProtocol.code(forScheme: scheme) else {
                throw StoreError(.invalidParameter, "git gave no protocol this helper keeps (\(fields["protocol"] ?? "none"))")
            }
            guard var host = fields["host"], !host.isEmpty else { throw StoreError(.invalidParameter, "git gave no host") }
            var criteria: [String: AttributeValue] = .named([.protocol: .string(code)])
            // No port is the protocol's default port: a credential for host:8443 is not one for host.
            var port = InternetProtocol.defaultPort(forScheme: scheme)
            if let colon = host.lastIndex(of: ":"), !host.hasSuffix("]") {
                guard let given = UInt16(host[host.index(after: colon)...]), given != 0 else {
                    throw StoreError(.invalidParameter, "git gave a host with a port that is not a number from 1 to 65535")
                }
                port = given
                host = String(host[..<colon])
            }
            if let port { criteria[.port] = .number(Int64(port)) }
            criteria[.server] = .string(host)
            if let path = fields["path"], !path.isEmpty { criteria[.path] = .string(path) }
            if let user = fields["username"], !user.isEmpty { criteria[.account] = .string(user) }
            return criteria
        }
    }

    /// Runs one operation; what `get` prints (nothing when nothing matches).
    package static func run(_ operation: String, input: [UInt8], session: Session) throws(StoreError) -> String {
        let credential = try GitCredential(parsing: input)
        let keychain = try session.path(nil)
        // This program's own group, which the agent names.
        let caller = Caller(accessGroups: [Caller.applicationGroupMarker])
        var query = ItemQuery(itemClass: .internetPassword)
        query.criteria = try credential.criteria
        switch operation {
        case "get":
            query.limit = 1
            let found = try session.items(matching: query, in: keychain, caller: caller, withSecrets: true)
            guard let item = found.first, let secret = item.secret else { return "" }
            var output = ""
            if case .string(let account)? = item.attributes[.account] { output += "username=\(account)\n" }
            output += "password=\(String(decoding: secret, as: UTF8.self))\n"
            return output
        case "store":
            guard let password = credential.fields["password"], credential.fields["username"] != nil else { return "" }
            var attributes = query.criteria
            attributes[.label] = query.criteria[.server]
            let item = NewItem(itemClass: .internetPassword, attributes: attributes, secret: Data(password.utf8), access: .creatorOnly)
            do throws(StoreError) {
                try session.send(.add(keychain: keychain, item: item, caller: caller))
            } catch where error.code == .duplicateItem {
                var changes = ItemChanges()
                changes.secret = Data(password.utf8)
                try session.send(.update(keychains: [keychain], query: query, changes: changes, caller: caller))
            }
            return ""
        case "erase":
            query.limit = nil
            if let password = credential.fields["password"] {
                // Only the credential git tried: a newer one stored since stays. A keychain that
                // stays locked, or any other failure, is said; only "none" is nothing to erase.
                for item in try session.items(matching: query, in: keychain, caller: caller, withSecrets: true) where item.secret == Data(password.utf8) {
                    var single = ItemQuery(itemClass: .internetPassword)
                    single.persistentReference = item.persistentReference
                    try session.send(.delete(keychains: [keychain], query: single, caller: caller, makeTombstones: false))
                }
                return ""
            }
            do throws(StoreError) {
                try session.send(.delete(keychains: [keychain], query: query, caller: caller, makeTombstones: false))
            } catch where error.code == .itemNotFound {}
            return ""
        default:
            return ""  // git's convention: an operation a helper does not know is not an error
        }
    }

    /// The executable's work: the operation from the arguments, the credential from standard input.
    package static func main(operation: String) -> Int32 {
        var input: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        // All of it is read (git's pipe never breaks), only the first MiB and a byte kept.
        while true {
            let count = read(0, &buffer, buffer.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { break }
            if input.count <= maximumInput { input += buffer[0..<min(count, maximumInput + 1 - input.count)] }
        }
        defer { zeroize(&input); zeroize(&buffer) }
        do throws(StoreError) {
            let session = try Session.open(notice: false)
            var output = Array(try run(operation, input: input, session: session).utf8)
            defer { zeroize(&output) }
            var offset = 0
            while offset < output.count {
                let written = output[offset...].withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
                guard written > 0 else { break }
                offset += written
            }
            return 0
        } catch {
            printError("git-credential-keyhaven: \(error.message)")
            return 1
        }
    }
}
