#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Crypto
import FoundationEssentials
import KeychainModel
import KeychainStore
import KeyhavenAgent
import KeyhavenDBus

extension SecretService {
    /// A call to the portal backend's object. `fromFrontend`: the caller owns the portal's
    /// frontend name (read on the bus thread when the call came).
    func portalMethod(_ method: Method, fromFrontend: Bool) throws(BusError) -> ([BusValue], Bool) {
        switch (method.interface, method.member) {
        case ("org.freedesktop.DBus.Introspectable", "Introspect"):
            return ([.string(Introspection.document(interfaces: [Introspection.introspectable, Introspection.properties,
                                                                 Introspection.portalSecret], children: []))], false)
        case ("org.freedesktop.DBus.Properties", "Get"):
            guard method.arguments.count == 2, method.arguments[0].stringValue == SecretPortal.interface,
                  method.arguments[1].stringValue == "version" else { throw .invalidArguments("no such property") }
            return ([.variant(.uint32(SecretPortal.version))], false)
        case ("org.freedesktop.DBus.Properties", "GetAll"):
            guard method.arguments.first?.stringValue == SecretPortal.interface else { return ([.properties([])], false) }
            return ([.properties([("version", .uint32(SecretPortal.version))])], false)
        default:
            break
        }
        try method.expect(SecretPortal.interface, "RetrieveSecret", "osha{sv}")
        guard fromFrontend else {
            throw .accessDenied("only the portal's frontend (\(SecretPortal.frontend)) may ask for an application's secret")
        }
        // The name alone is anyone's who takes it first (or queues for it): its owner must be
        // xdg-desktop-portal itself, pinned when it joined the bus and checked at every call.
        guard let identity = try context(method.call).identity else { throw .accessDenied("the caller's program cannot be read") }
        if let why = SystemProgram.portalFrontend.refusal(identity) {
            throw .accessDenied("only xdg-desktop-portal may ask for an application's secret, and the owner of \(SecretPortal.frontend) is not: \(why)")
        }
        guard let appID = method.arguments[1].stringValue, SecretPortal.isApplicationID(appID) else {
            throw .invalidArguments("the application id is empty or not an application id")
        }
        guard case .fileDescriptor(let descriptor) = method.arguments[2] else { throw .invalidArguments("no file descriptor") }
        try Self.checkWritable(descriptor.fd)
        var secret = try applicationSecret(appID, call: method.call)
        defer { secret.resetBytes(in: 0..<secret.count) }
        try Self.writeAll(secret, to: descriptor.fd)
        return ([.uint32(0), .properties([])], false)
    }

    /// The application's secret, made (random) and stored at its first request. In the default
    /// keychain; when that keychain is locked and has never been unlocked since the agent started,
    /// the user is asked for its password first.
    func applicationSecret(_ appID: String, call: BusCall) throws(BusError) -> Data {
        let keychain = SecretObject.defaultKeychain(of: agent.home)
        let database: KeychainDatabase
        do { database = try agent.database(keychain) } catch { throw BusError(error) }
        do {
            return try Self.findOrAdd(appID, in: database)
        } catch where error.code == .interactionNotAllowed {
            let context = try context(call)
            guard let client = context.client, let identity = context.identity else { throw .isLocked("the keychain") }
            do {
                try agent.prompter.unlock(database, client: client, identity: identity)
                return try Self.findOrAdd(appID, in: database)
            } catch {
                throw BusError(error)
            }
        } catch {
            throw BusError(error)
        }
    }

    static let portalCaller = Caller(accessGroups: [SecretPortal.group])

    /// The stored secret of `appID`, or a new one stored now. Two first requests at once store
    /// one: the second add finds the first's item.
    static func findOrAdd(_ appID: String, in database: KeychainDatabase) throws(StoreError) -> Data {
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = .named([.service: .string(SecretPortal.service), .account: .string(appID), .accessGroup: .string(SecretPortal.group)])
        if let found = try find(query, in: database) { return found }
        var bytes = SymmetricKey(size: SymmetricKeySize(bitCount: SecretPortal.secretByteCount * 8)).withUnsafeBytes { Data($0) }
        defer { bytes.resetBytes(in: 0..<bytes.count) }
        var attributes = query.criteria
        attributes[.accessible] = .string(KeyClass.afterFirstUnlock.rawValue)
        attributes[.label] = .string("Secret portal: \(appID)")
        attributes[.synchronizable] = .number(0)
        do {
            _ = try database.add(NewItem(itemClass: .genericPassword, attributes: attributes, secret: bytes), caller: portalCaller)
        } catch where error.code == .duplicateItem {
            if let found = try find(query, in: database) { return found }
            throw error
        }
        guard let stored = try find(query, in: database) else { throw StoreError(.itemNotFound, "the secret just stored is not there") }
        return stored
    }

    private static func find(_ query: ItemQuery, in database: KeychainDatabase) throws(StoreError) -> Data? {
        do {
            return try database.find(query, caller: portalCaller, withSecrets: true).first?.secret
        } catch where error.code == .itemNotFound {
            return nil
        }
    }

    /// A descriptor the secret can be written to: open for writing, its reader still there
    /// (a pipe whose read end is closed reports an error to `poll`).
    static func checkWritable(_ fd: Int32) throws(BusError) {
        let flags = fcntl(fd, F_GETFL)
        guard flags >= 0, flags & O_ACCMODE == O_WRONLY || flags & O_ACCMODE == O_RDWR else {
            throw .invalidArguments("the file descriptor is not open for writing")
        }
        var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
        guard poll(&descriptor, 1, 0) >= 0, Int32(descriptor.revents) & (POLLERR | POLLHUP | POLLNVAL) == 0 else {
            throw .invalidArguments("the file descriptor cannot be written to: its reader has gone")
        }
    }

    /// Writes all of `secret` (waiting while a non-blocking pipe is full, at most a few seconds).
    static func writeAll(_ secret: Data, to fd: Int32) throws(BusError) {
        let failure: BusError? = secret.withUnsafeBytes { buffer -> BusError? in
            var offset = 0
            var waits = 0
            while offset < buffer.count {
                let written = write(fd, buffer.baseAddress! + offset, buffer.count - offset)
                if written > 0 { offset += written; continue }
                if written < 0 && errno == EINTR { continue }
                if written < 0 && errno == EAGAIN && waits < 50 {
                    waits += 1
                    var descriptor = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                    _ = poll(&descriptor, 1, 100)
                    continue
                }
                return .failed("the secret could not be written to the file descriptor: \(String(cString: strerror(errno)))")
            }
            return nil
        }
        if let failure { throw failure }
    }
}
