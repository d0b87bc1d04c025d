#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainModel
import KeychainStore
import KeyhavenDBus

/// A program of the system the agent believes on the bus: the Secret portal's frontend
/// (xdg-desktop-portal), the session bus's daemon (dbus-daemon, dbus-broker) and the user's
/// service manager (systemd --user, for the session's display). Believed only
/// when the process is untampered and runs, as the agent itself sees it, an executable of that
/// name that root alone can change, in folders root alone can change: a name on the bus, or a
/// program the user built or copied, is not enough (docs/threat-model.md, "The buses").
package struct SystemProgram: Sendable {
    /// The executable's file names that count.
    package let names: Set<String>
    /// What the program is, for messages.
    package let role: String

    package static let portalFrontend = SystemProgram(names: ["xdg-desktop-portal"], role: "xdg-desktop-portal")
    package static let busDaemon = SystemProgram(names: ["dbus-daemon", "dbus-broker"], role: "the session bus's daemon (dbus-daemon or dbus-broker)")
    package static let userManager = SystemProgram(names: ["systemd"], role: "the user's service manager (systemd --user)")

    /// Nil when the daemon at the other end of `connection` is a genuine dbus-daemon or
    /// dbus-broker of this user's or root's; else why not. The bus names each caller's process,
    /// and a daemon of a program's own making could name any (docs/threat-model.md, "The buses").
    /// `bus` names it in the answer.
    package static func busDaemonRefusal(_ connection: BusConnection, bus: String = "the session bus") -> String? {
        guard let daemon = connection.daemon else { return "\(bus) does not say which process serves it" }
        guard daemon.uid == getuid() || daemon.uid == 0 else { return "\(bus) is served by another user's process (uid \(daemon.uid))" }
        return busDaemon.refusal(ClientProcess(pid: daemon.pid, pidfd: ClientProcess.openPidfd(daemon.pid))).map {
            "\(bus) is not served by a genuine bus daemon (\($0))"
        }
    }

    /// Nil when the connection `owner` on `connection` is this program, run by this user; else
    /// why not.
    package func refusal(owner: String, on connection: BusConnection) -> String? {
        guard let uid = try? connection.unixUser(of: owner), let pid = connection.pid(of: owner) else {
            return "the bus does not say who \(owner) is"
        }
        guard uid == getuid() else { return "it runs as user \(uid)" }
        return refusal(ClientProcess(pid: pid, pidfd: ClientProcess.openPidfd(pid)))
    }

    /// Nil when `client` runs this program; else why not, for the refusal's message.
    package func refusal(_ client: ClientProcess) -> String? {
        refusal(client.identity())
    }

    /// Nil when `identity` (a running process's) is this program; else why not.
    package func refusal(_ identity: ApplicationIdentity) -> String? {
        let name = identity.path.split(separator: "/").last.map(String.init) ?? ""
        guard names.contains(name) else { return "it runs \(identity.path.isEmpty ? "a program that cannot be read" : identity.path), not \(role)" }
        guard identity.isPathVerified else { return "its program \(identity.path) is not the file at that path in the agent's view" }
        guard !identity.isTampered else { return "\(identity.path) runs with code that is not its own, or under a debugger" }
        var info = stat()
        guard stat(identity.path, &info) == 0, ApplicationIdentityReader.isRootsProgram(info, path: identity.path) else {
            return "\(identity.path) is not a program only root can change"
        }
        return nil
    }
}
