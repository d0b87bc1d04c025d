#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainModel
import KeyhavenDBus
import KeyhavenSecretServiceCore

/// Reads every item of the Secret Service provider running on the session bus (gnome-keyring,
/// KeePassXC), for `keyhaven import-secrets --from secret-service`: as a client, through a DH
/// session (no secret crosses the bus in the clear), unlocking locked collections through the
/// provider's own prompt.
package struct SecretServiceReader {
    /// One item as the provider keeps it.
    package struct Entry: Sendable {
        package var label: String
        package var attributes: [String: String]
        package var secret: Data
        package var contentType: String
        /// The collection's label.
        package var collection: String
    }

    /// What was read, and the collections left locked (their prompt dismissed or unanswered).
    package struct Result: Sendable {
        package var entries: [Entry] = []
        package var lockedCollections: [String] = []
    }

    static let name = SecretServiceNames.busName
    static let root = SecretServiceNames.root
    private let connection: BusConnection

    package init() throws(StoreError) {
        connection = try BusConnection()
    }

    /// Who provides the Secret Service now, if anyone: its process id.
    package func providerPID() throws(StoreError) -> Int32? {
        do {
            let owned = try connection.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                                            [.string(Self.name)])
            guard owned.first?.boolValue == true else { return nil }
            let reply = try connection.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                            "GetConnectionUnixProcessID", [.string(Self.name)])
            guard case .uint32(let pid)? = reply.first else { return nil }
            return Int32(bitPattern: pid)
        } catch {
            throw StoreError(.notAvailable, "the session bus does not answer: \(error.message)")
        }
    }

    /// Every item of every collection; `progress` is told each collection's count as it goes.
    /// Without secrets (a dry run), items are listed only, and locked collections are not unlocked.
    /// `promptSeconds`: how long a locked collection's unlock prompt may take.
    package func readAll(withSecrets: Bool = true, promptSeconds: Int = 300,
                         progress: (Int, Int) -> Void = { _, _ in }) throws(StoreError) -> Result {
        do throws(BusError) {
            let (path, session) = try openSession()
            defer { _ = try? call(path, "org.freedesktop.Secret.Session", "Close") }
            var result = Result()
            let collections = try connection.property(Self.name, Self.root, SecretServiceNames.serviceInterface, "Collections").pathsValue ?? []
            for collection in collections {
                let label = (try? connection.property(Self.name, collection, SecretServiceNames.collectionInterface, "Label").stringValue) ?? nil
                var readable = true
                if withSecrets { readable = try unlock(collection, promptSeconds: promptSeconds) }
                guard readable else {
                    result.lockedCollections.append(label ?? collection)
                    continue
                }
                let items = try connection.property(Self.name, collection, SecretServiceNames.collectionInterface, "Items").pathsValue ?? []
                guard withSecrets else {
                    result.entries += items.map { _ in Entry(label: "", attributes: [:], secret: Data(), contentType: "", collection: label ?? collection) }
                    continue
                }
                var done = 0
                // In batches: one reply holds every secret it names.
                for start in stride(from: 0, to: items.count, by: 50) {
                    let batch = Array(items[start..<min(items.count, start + 50)])
                    let secrets = try call(Self.root, SecretServiceNames.serviceInterface, "GetSecrets",
                                           [.array(element: "o", batch.map(BusValue.objectPath)), .objectPath(path)])
                    guard case .dictionary(_, _, let pairs)? = secrets.first else { throw BusError.failed("GetSecrets did not answer a{o(oayays)}") }
                    for pair in pairs {
                        guard case .objectPath(let item) = pair.key else { continue }
                        let (secret, contentType) = try session.decode(pair.value)
                        let properties = try connection.call(Self.name, item, "org.freedesktop.DBus.Properties", "GetAll",
                                                             [.string(SecretServiceNames.itemInterface)])
                        let values = properties.first?.propertiesValue ?? [:]
                        result.entries.append(Entry(label: values["Label"]?.stringValue ?? "",
                                                    attributes: values["Attributes"]?.stringDictionaryValue ?? [:],
                                                    secret: secret, contentType: contentType, collection: label ?? collection))
                    }
                    done += batch.count
                    progress(done, items.count)
                }
            }
            return result
        } catch {
            throw StoreError(.notAvailable, "reading the Secret Service failed: \(error.name): \(error.message)")
        }
    }

    /// The secret of the first item whose attributes include `attributes` (SearchItems), its
    /// item unlocked through the provider's prompt if it is locked; nil when none matches or it
    /// stays locked.
    package func lookup(_ attributes: [String: String], promptSeconds: Int = 300) throws(StoreError) -> Data? {
        do throws(BusError) {
            let query = BusValue.dictionary(key: "s", value: "s", attributes.sorted { $0.key < $1.key }.map { BusValue.Pair(.string($0.key), .string($0.value)) })
            let found = try call(Self.root, SecretServiceNames.serviceInterface, "SearchItems", [query])
            guard found.count == 2 else { throw BusError.failed("the provider's SearchItems answer is not (ao, ao)") }
            var item = found[0].pathsValue?.first
            if item == nil, let locked = found[1].pathsValue?.first {
                item = try unlockObject(locked, promptSeconds: promptSeconds) ? locked : nil
            }
            guard let item else { return nil }
            let (path, session) = try openSession()
            defer { _ = try? call(path, "org.freedesktop.Secret.Session", "Close") }
            let reply = try call(item, SecretServiceNames.itemInterface, "GetSecret", [.objectPath(path)])
            guard let secret = reply.first else { throw BusError.failed("GetSecret answered nothing") }
            return try session.decode(secret).0
        } catch {
            throw StoreError(.notAvailable, "reading the Secret Service failed: \(error.name): \(error.message)")
        }
    }

    /// A DH session with the provider (no secret crosses the bus in the clear): its path, and
    /// the client's side that decodes the secrets it sends. The caller closes it.
    private func openSession() throws(BusError) -> (path: String, session: SecretSession) {
        let exchange = try DiffieHellman()
        let opened = try call(Self.root, SecretServiceNames.serviceInterface, "OpenSession",
                              [.string(SecretSession.dhAlgorithm), .variant(.bytes(exchange.publicKey))])
        guard opened.count == 2, let providerKey = opened[0].bytesValue, case .objectPath(let path) = opened[1] else {
            throw BusError.failed("the provider's OpenSession answer is not (v, o)")
        }
        return (path, try SecretSession.client(path: path, exchange: exchange, providerPublicKey: providerKey))
    }

    /// Unlocks a collection or an item through the provider's prompt; false when it stays locked.
    private func unlockObject(_ item: String, promptSeconds: Int) throws(BusError) -> Bool {
        let reply = try call(Self.root, SecretServiceNames.serviceInterface, "Unlock", [.array(element: "o", [.objectPath(item)])])
        guard reply.count == 2, case .objectPath(let prompt) = reply[1] else { throw .failed("the provider's Unlock answer is not (ao, o)") }
        if prompt == "/" { return reply[0].pathsValue?.contains(item) == true }
        let completed = try connection.awaitSignal(prompt, "org.freedesktop.Secret.Prompt", "Completed", seconds: promptSeconds) {
            () throws(BusError) in _ = try call(prompt, "org.freedesktop.Secret.Prompt", "Prompt", [.string("")])
        }
        guard let completed, completed.first?.boolValue == false else {
            _ = try? call(prompt, "org.freedesktop.Secret.Prompt", "Dismiss")
            return false
        }
        return true
    }

    /// Unlocks a collection if it is locked, through the provider's prompt; false when it stays locked.
    private func unlock(_ collection: String, promptSeconds: Int) throws(BusError) -> Bool {
        guard try connection.property(Self.name, collection, SecretServiceNames.collectionInterface, "Locked").boolValue == true else {
            return true
        }
        return try unlockObject(collection, promptSeconds: promptSeconds)
    }

    private func call(_ path: String, _ interface: String, _ member: String, _ values: [BusValue] = []) throws(BusError) -> [BusValue] {
        try connection.call(Self.name, path, interface, member, values)
    }
}
