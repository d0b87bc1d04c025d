import Foundation
import KeychainModel
import KeyhavenAgentClient

/// A stand-in for another user's fake agent (the two-user impersonation test): binds a Unix socket
/// at `path`, opens it to everyone (0777), accepts connections and prints, per connection, how many
/// bytes it received before the peer closed: `received N`. Runs until killed.
func runListener(path: String) -> Never {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (i, byte) in bytes.enumerated() { raw[i] = byte }
        raw[bytes.count] = 0
    }
    unlink(path)
    let bound = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard fd >= 0, bound == 0, chmod(path, 0o777) == 0, listen(fd, 16) == 0 else {
        say("error listen \(String(cString: strerror(errno)))")
        exit(1)
    }
    say("listening")
    while true {
        let client = accept(fd, nil, nil)
        if client < 0 { continue }
        var total = 0
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(client, $0.baseAddress, $0.count, 0) }
            if n <= 0 { break }
            total += n
        }
        close(client)
        say("received \(total)")
    }
}

/// Writes a line to standard output at once (unbuffered: the test reads it while this runs).
private func say(_ line: String) {
    let bytes = Array((line + "\n").utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

/// Connects to the agent socket at `path` as the library does and says hello: prints "ok" or the
/// error (the impersonation test's check of the client alone).
func runProbe(path: String) -> Never {
    do {
        _ = try AgentClient(socket: AgentSocket(path: path)).send(.hello)
        say("ok")
        exit(0)
    } catch {
        say("error \(error.message)")
        exit(1)
    }
}

/// Sends one request to the agent at SOCKET, as a program that is not an administrator program:
/// `done`, or "refused MESSAGE".
func runAgentRequest(path: String, _ request: AgentRequest, done: String) -> Never {
    do {
        _ = try AgentClient(socket: AgentSocket(path: path)).send(request)
        say(done)
        exit(0)
    } catch {
        say("refused \(error.message)")
        exit(1)
    }
}
