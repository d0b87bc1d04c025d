#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CSystemdBus
import KeychainModel

/// The process at the other end of the connection: the bus daemon itself, as the kernel names it
/// (SO_PEERCRED of the socket, taken when the connection was made). Everything the bus says about
/// its clients (their pids, their users, who owns a name) is only as true as this process is
/// genuine, so the agent checks it before it believes the bus (docs/threat-model.md, "The buses").
package struct BusDaemon: Sendable, Equatable {
    package let pid: Int32
    package let uid: UInt32
}

extension BusConnection {
    /// The daemon's process and user (sd-bus keeps what SO_PEERCRED said when it connected); nil
    /// when the socket does not say.
    package var daemon: BusDaemon? {
        var creds: OpaquePointer?
        guard sd_bus_get_owner_creds(handle, kh_bus_creds_peer(), &creds) >= 0, let creds else { return nil }
        defer { sd_bus_creds_unref(creds) }
        var pid: pid_t = 0
        var uid: uid_t = 0
        guard sd_bus_creds_get_pid(creds, &pid) >= 0, pid > 0, sd_bus_creds_get_euid(creds, &uid) >= 0 else { return nil }
        return BusDaemon(pid: pid, uid: uid)
    }

    /// The system bus, for a service whose answers the agent acts on (fprintd): its standard
    /// socket, or the tests' bus (``systemBusAddress``); refused unless root runs its daemon, since
    /// only then are the users and owners it reports the kernel's.
    package static func rootsSystemBus() throws(StoreError) -> BusConnection {
        let address = systemBusAddress
        let connection = try BusConnection(address: address)
        guard let daemon = connection.daemon, daemon.uid == 0 else {
            throw StoreError(.notAvailable, "the system bus at \(address) is not served by root, so what it says of its clients cannot be believed")
        }
        return connection
    }

    /// The user the connection `uniqueName` runs as, as the bus daemon knows it.
    package func unixUser(of uniqueName: String) throws(BusError) -> UInt32 {
        let reply = try call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "GetConnectionUnixUser",
                             [.string(uniqueName)])
        guard case .uint32(let uid)? = reply.first else { throw .failed("the bus did not say which user \(uniqueName) is") }
        return uid
    }

    /// The unique name of the connection that owns `name`, if it runs as root: the system
    /// services the agent believes (logind, fprintd) do. The bus's policy gives their names to
    /// root alone, but a bus whose policy is looser, or a moment the service is not running, must
    /// not let a program of the user answer in its place. `service` names it in messages.
    package func rootOwner(of name: String, service: String) throws(BusError) -> String {
        guard let owner = owner(of: name) else { throw .failed("\(service) is not running") }
        let uid = try unixUser(of: owner)
        guard uid == 0 else { throw .accessDenied("\(name) is held by a program of user \(uid), not by \(service), which runs as root") }
        return owner
    }
}
