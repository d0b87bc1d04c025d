/// The display the agent draws its prompts on: the user's graphical session's, as the agent finds
/// it itself (``SessionDisplayFinder``), never as a client's memory says (docs/access.md, "Where
/// prompts go").
package struct SessionDisplay: Sendable, Equatable, CustomStringConvertible {
    /// Where the agent found it, strongest first.
    package enum Source: Sendable, Equatable {
        /// logind's record of the user's graphical session, which root keeps.
        case logind
        /// The environment of the user's service manager (`systemctl --user show-environment`),
        /// which the session sets at login.
        case userManager
        /// The agent's own environment, as it was started.
        case agent
        /// The client's own environment: only when none of the above names a display.
        case client

        var phrase: String {
            switch self {
            case .logind: "logind's graphical session"
            case .userManager: "the user's service manager"
            case .agent: "the agent's environment"
            case .client: "the program's own environment"
            }
        }
    }

    /// The user's graphical session as logind records it.
    package struct LogindSession: Sendable, Equatable {
        /// `x11`, `wayland`, `mir`, `tty` or `unspecified`.
        package let type: String
        /// Its X display (`:0`), empty for a Wayland session.
        package let display: String

        package init(type: String, display: String) { (self.type, self.display) = (type, display) }
    }

    /// The variables that say where a graphical program draws, as pinentry is given them.
    package static let names = ["DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY"]

    /// Those of ``names`` that are set.
    package let variables: [String: String]
    package let source: Source

    package var description: String {
        let shown = ["WAYLAND_DISPLAY", "DISPLAY"].compactMap { name in variables[name].map { "\(name)=\($0)" } }
        return "\(shown.joined(separator: " ")) (\(source.phrase))"
    }

    /// The display a prompt goes to, from what each source says (nil: it says nothing).
    ///
    /// logind wins for an X11 session: root keeps that record, so no program of the user can move
    /// it. A Wayland session's socket is not in logind's record, so the service manager's
    /// environment names it (and any display there, when logind has no graphical session); then
    /// the agent's own environment; then, only when none of those names a display, the client's.
    package static func choose(logind: LogindSession?, userManager: [String: String]?, agent: [String: String],
                               client: [String: String]?) -> SessionDisplay? {
        func relevant(_ environment: [String: String]?) -> [String: String] {
            (environment ?? [:]).filter { names.contains($0.key) && !$0.value.isEmpty }
        }
        func namesOne(_ environment: [String: String]) -> Bool { environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil }
        let manager = relevant(userManager), own = relevant(agent), theirs = relevant(client)
        if let logind, logind.type == "x11", !logind.display.isEmpty {
            var variables = ["DISPLAY": logind.display]
            // The cookie that opens it, where the session keeps it; a wrong one fails the prompt, it
            // cannot move it.
            variables["XAUTHORITY"] = manager["XAUTHORITY"] ?? own["XAUTHORITY"]
            return SessionDisplay(variables: variables, source: .logind)
        }
        if namesOne(manager) { return SessionDisplay(variables: manager, source: .userManager) }
        if namesOne(own) { return SessionDisplay(variables: own, source: .agent) }
        if namesOne(theirs) { return SessionDisplay(variables: theirs, source: .client) }
        return nil
    }
}
