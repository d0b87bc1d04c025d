@testable import KeyhavenAgent
import Testing

/// Which source names the display a prompt goes to (``SessionDisplay/choose(logind:userManager:agent:client:)``).
struct SessionDisplayTests {
    typealias Session = SessionDisplay.LogindSession

    @Test("logind's X11 session wins, with the session's cookie; nothing else the other sources say comes along")
    func logindWins() {
        let display = SessionDisplay.choose(logind: Session(type: "x11", display: ":0"),
                                            userManager: ["DISPLAY": ":9", "WAYLAND_DISPLAY": "wayland-9", "XAUTHORITY": "/run/user/1000/gdm/Xauthority"],
                                            agent: ["DISPLAY": ":8", "XAUTHORITY": "/home/a/.Xauthority"], client: ["DISPLAY": ":7"])
        #expect(display == SessionDisplay(variables: ["DISPLAY": ":0", "XAUTHORITY": "/run/user/1000/gdm/Xauthority"], source: .logind))
        #expect(display?.description == "DISPLAY=:0 (logind's graphical session)")
        // Without the manager's cookie, the agent's.
        #expect(SessionDisplay.choose(logind: Session(type: "x11", display: ":0"), userManager: nil, agent: ["XAUTHORITY": "/a"],
                                      client: nil)?.variables == ["DISPLAY": ":0", "XAUTHORITY": "/a"])
    }

    @Test("A Wayland session, or no graphical one, or an X11 one without a display: the service manager, then the agent, then the client")
    func fallBack() {
        for logind in [Session(type: "wayland", display: ""), Session(type: "tty", display: ""), Session(type: "x11", display: ""), nil] {
            #expect(SessionDisplay.choose(logind: logind, userManager: ["WAYLAND_DISPLAY": "wayland-0", "PATH": "/usr/bin"], agent: ["DISPLAY": ":8"],
                                          client: ["DISPLAY": ":7"]) == SessionDisplay(variables: ["WAYLAND_DISPLAY": "wayland-0"], source: .userManager))
            #expect(SessionDisplay.choose(logind: logind, userManager: ["XAUTHORITY": "/x", "DISPLAY": ""], agent: ["DISPLAY": ":8", "TERM": "xterm"],
                                          client: ["DISPLAY": ":7"]) == SessionDisplay(variables: ["DISPLAY": ":8"], source: .agent))
            #expect(SessionDisplay.choose(logind: logind, userManager: nil, agent: [:], client: ["DISPLAY": ":7", "XAUTHORITY": "/c"])
                    == SessionDisplay(variables: ["DISPLAY": ":7", "XAUTHORITY": "/c"], source: .client))
            #expect(SessionDisplay.choose(logind: logind, userManager: [:], agent: ["XAUTHORITY": "/a"], client: ["WAYLAND_DISPLAY": ""]) == nil)
        }
    }
}
