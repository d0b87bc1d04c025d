#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainModel
import KeyhavenDBus

/// Finds the user's graphical session's display when a prompt is about to be shown, asking each
/// source anew (the session may have ended or begun since the agent started):
///
/// 1. logind (`org.freedesktop.login1` on the system bus, served by root and owned by root): the
///    user's `Display` session, its `Type` and X `Display`;
/// 2. the user's service manager (`org.freedesktop.systemd1` on the user's bus, owned by a genuine
///    `systemd --user` of this user): its `Environment`;
/// 3. the agent's own environment, as it was started.
///
/// ``SessionDisplay/choose(logind:userManager:agent:client:)`` decides between them.
package struct SessionDisplayFinder: Sendable {
    static let logind = "org.freedesktop.login1"
    static let manager = "org.freedesktop.systemd1"

    /// The agent's environment as it was started.
    let environment: [String: String]

    package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        self.environment = environment
    }

    /// The user's bus: `DBUS_SESSION_BUS_ADDRESS`, else the bus in `XDG_RUNTIME_DIR` (where
    /// systemd's user bus listens); nil when neither is set.
    package var userBusAddress: String? {
        if let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty { return address }
        guard let runtime = environment["XDG_RUNTIME_DIR"], !runtime.isEmpty else { return nil }
        return "unix:path=\(runtime)/bus"
    }

    /// The display a prompt for a client whose environment is `client` goes to, and what each
    /// source that said nothing answered (for the log, when there is no display).
    package func find(client: [String: String]?) -> (display: SessionDisplay?, unanswered: [String]) {
        var unanswered: [String] = []
        var session: SessionDisplay.LogindSession?
        do throws(StoreError) {
            session = try logindSession()
            if session == nil { unanswered.append("logind knows no graphical session of this user") }
        } catch {
            unanswered.append("logind: \(error.message)")
        }
        var managed: [String: String]?
        do throws(StoreError) {
            managed = try userManagerEnvironment()
        } catch {
            unanswered.append("the user's service manager: \(error.message)")
        }
        let display = SessionDisplay.choose(logind: session, userManager: managed, agent: environment, client: client)
        if display == nil {
            if managed != nil { unanswered.append("the user's service manager names no display") }
            unanswered.append("the agent was started without DISPLAY or WAYLAND_DISPLAY")
        }
        return (display, unanswered)
    }

    /// The user's graphical session in logind; nil when logind knows none.
    func logindSession() throws(StoreError) -> SessionDisplay.LogindSession? {
        let bus = try BusConnection.rootsSystemBus()
        do throws(BusError) {
            let login1 = try bus.rootOwner(of: Self.logind, service: "logind")
            let user = try bus.call(login1, "/org/freedesktop/login1", "org.freedesktop.login1.Manager", "GetUser",
                                    [.uint32(getuid())], timeout: 2_000_000)
            guard let userPath = user.first?.stringValue else { throw BusError.failed("GetUser named no user object") }
            // (so): the session logind counts as the user's graphical one; "/" when there is none.
            guard case .structure(let display) = try bus.property(login1, userPath, "org.freedesktop.login1.User", "Display"),
                  display.count == 2, let sessionPath = display[1].stringValue else {
                throw BusError.failed("the user's Display is not (so)")
            }
            guard sessionPath != "/" else { return nil }
            let type = try bus.property(login1, sessionPath, "org.freedesktop.login1.Session", "Type").stringValue ?? ""
            let x = try bus.property(login1, sessionPath, "org.freedesktop.login1.Session", "Display").stringValue ?? ""
            return SessionDisplay.LogindSession(type: type, display: x)
        } catch {
            throw StoreError(.notAvailable, error.message)
        }
    }

    /// The user's service manager's environment; nil when no manager runs on the user's bus.
    func userManagerEnvironment() throws(StoreError) -> [String: String]? {
        guard let address = userBusAddress else { return nil }
        let bus = try BusConnection(address: address)
        if let why = SystemProgram.busDaemonRefusal(bus, bus: "the user's bus") { throw StoreError(.notAvailable, why) }
        guard let owner = bus.owner(of: Self.manager) else { return nil }
        if let why = SystemProgram.userManager.refusal(owner: owner, on: bus) {
            throw StoreError(.notAvailable, "\(Self.manager) is not the user's service manager: \(why)")
        }
        do throws(BusError) {
            guard case .array("s", let entries) = try bus.property(owner, "/org/freedesktop/systemd1", "org.freedesktop.systemd1.Manager",
                                                                   "Environment") else {
                throw BusError.failed("its Environment is not an array of strings")
            }
            var environment: [String: String] = [:]
            for entry in entries.compactMap(\.stringValue) {
                guard let equals = entry.firstIndex(of: "=") else { continue }
                environment[String(entry[..<equals])] = String(entry[entry.index(after: equals)...])
            }
            return environment
        } catch {
            throw StoreError(.notAvailable, error.message)
        }
    }
}
