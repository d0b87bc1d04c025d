#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import KeychainModel
import KeyhavenDBus

/// Follows this user's sessions in logind (`org.freedesktop.login1`) on the system bus and
/// reports what happens to them as ``SessionEvent``s: `Lock` and `Unlock`, the `LockedHint` and
/// `IdleHint` properties of the user's sessions, and the manager's `PrepareForSleep`. Signals
/// from sessions of other users are ignored. Without a system bus or a logind it reports nothing
/// and says so in the log; when the bus goes away it connects again, so neither logind's
/// restart nor the bus's stops the agent.
package final class LogindWatch: Sendable {
    static let service = "org.freedesktop.login1"
    static let sessionInterface = "org.freedesktop.login1.Session"
    static let managerInterface = "org.freedesktop.login1.Manager"

    private let address: String
    private let retry: Duration
    private let onEvent: @Sendable (SessionEvent) -> Void
    private let log: @Sendable (String) -> Void

    /// Watches the bus at `address` (the system bus as sd-bus finds it by default), trying again
    /// every `retry` while it cannot connect.
    package init(address: String = BusConnection.systemBusAddress, retry: Duration = .seconds(5),
                 onEvent: @escaping @Sendable (SessionEvent) -> Void, log: @escaping @Sendable (String) -> Void) {
        self.address = address
        self.retry = retry
        self.onEvent = onEvent
        self.log = log
    }

    /// Watches on a thread of its own, for as long as the process runs.
    package func start() {
        let thread = Thread { [self] in run() }
        thread.name = "keyhaven.logind"
        thread.start()
    }

    private func run() {
        var saidUnavailable = false
        // Not `while true`: Swift 6.3's loop-invariant code motion never ends on this loop without
        // an exit, and a release build hangs. The thread is never cancelled.
        while !Thread.current.isCancelled {
            do throws(StoreError) {
                let connection = try BusConnection(address: address)
                try subscribe(connection)
                let present = (try? connection.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                                    "NameHasOwner", [.string(Self.service)]).first?.boolValue) ?? false
                log(present ? "following the session in logind: keychains that ask for it lock with the screen and on sleep"
                            : "no logind on the system bus yet: keychains lock with the screen once it appears")
                saidUnavailable = false
                connection.run()
                log("the system bus went away; connecting again")
            } catch {
                if !saidUnavailable {
                    log("no system bus (\(error.message)): keychains do not lock with the screen; trying again every \(retry)")
                    saidUnavailable = true
                }
            }
            Thread.sleep(forTimeInterval: Double(retry.components.seconds))
        }
    }

    private func subscribe(_ connection: BusConnection) throws(StoreError) {
        let sessions = SessionOwnership(connection: connection)
        for member in ["Lock", "Unlock"] {
            try connection.watchSignals(sender: Self.service, path: nil, interface: Self.sessionInterface, member: member) { [self] signal in
                guard sessions.isMine(signal.path) else { return }
                onEvent(member == "Lock" ? .screenLocked : .screenUnlocked)
            }
        }
        try connection.watchSignals(sender: Self.service, path: "/org/freedesktop/login1", interface: Self.managerInterface,
                                    member: "PrepareForSleep") { [self] signal in
            if signal.arguments.first?.boolValue == true { onEvent(.sleeping) }
        }
        try connection.watchSignals(sender: Self.service, path: nil, interface: "org.freedesktop.DBus.Properties",
                                    member: "PropertiesChanged") { [self] signal in
            guard signal.arguments.first?.stringValue == Self.sessionInterface, sessions.isMine(signal.path) else { return }
            for event in Self.events(changed: signal.arguments.count > 1 ? signal.arguments[1] : .properties([]),
                                     path: signal.path, connection: connection) {
                onEvent(event)
            }
        }
    }

    /// The events in a session's changed properties; the idle time is read from the session
    /// when the change does not carry it.
    static func events(changed: BusValue, path: String, connection: BusConnection) -> [SessionEvent] {
        let properties = changed.propertiesValue ?? [:]
        var events: [SessionEvent] = []
        if let locked = properties["LockedHint"]?.boolValue { events.append(locked ? .screenLocked : .screenUnlocked) }
        if let idle = properties["IdleHint"]?.boolValue {
            guard idle else { return events + [.active] }
            let since = properties["IdleSinceHint"]?.unsignedValue
                ?? (try? connection.property(service, path, sessionInterface, "IdleSinceHint"))?.unsignedValue ?? 0
            events.append(.idle(idleDuration(sinceMicroseconds: since)))
        }
        return events
    }

    /// How long ago a `CLOCK_REALTIME` timestamp in microseconds was (0 when unknown or ahead).
    static func idleDuration(sinceMicroseconds since: UInt64) -> Duration {
        guard since > 0 else { return .zero }
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
        return nowMicroseconds > since ? .microseconds(nowMicroseconds - since) : .zero
    }
}

/// Which session objects are this user's: asked of logind once per session (its `User`
/// property), on the bus thread.
final class SessionOwnership {
    private let connection: BusConnection
    private var known: [String: Bool] = [:]

    init(connection: BusConnection) { self.connection = connection }

    func isMine(_ path: String) -> Bool {
        if let mine = known[path] { return mine }
        guard path.hasPrefix("/org/freedesktop/login1/session/"),
              case .structure(let user)? = try? connection.property(LogindWatch.service, path, LogindWatch.sessionInterface, "User"),
              let uid = user.first?.unsignedValue else { return false }
        let mine = uid == UInt64(getuid())
        known[path] = mine
        return mine
    }
}
