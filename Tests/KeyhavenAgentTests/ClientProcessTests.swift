import Foundation
import KeyhavenAgent
import Testing

/// The agent pins each client to its process with a pidfd: alive while it runs, gone from the
/// moment it exits, whether or not it has been reaped (docs/access.md, "Which program is
/// asking").
struct ClientProcessTests {
    @Test("A client is alive while it runs, and not once it has exited, reaped or not")
    func aliveUntilExit() throws {
        // A child of this test's own (posix_spawn, not Foundation's Process, which reaps on its
        // own), that exits when its standard input closes. The socket pair is close-on-exec, so
        // that no other test's child inherits this end and holds the child's input open (its
        // standard input is a duplicate, which is not).
        var ends: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, ends[0], 0)
        var pid: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = ["/bin/sh", "-c", "cat >/dev/null"].map { (text: String) in strdup(text) } + [nil]
        defer { arguments.forEach { free($0) } }
        try #require(posix_spawn(&pid, "/bin/sh", &actions, nil, arguments, environ) == 0)
        close(ends[0])

        let pidfd = ClientProcess.openPidfd(pid)
        try #require(pidfd >= 0, "pidfd_open is needed (Linux 5.3)")
        let client = ClientProcess(pid: pid, pidfd: pidfd)
        #expect(client.isAlive)
        #expect(client.isAlive, "asking twice changes nothing")

        // Exited, not reaped yet (a zombie): gone for the agent. It sends nothing more, and its
        // pid is not reused until it is reaped.
        close(ends[1])
        var info = siginfo_t()
        #expect(waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) == 0)
        #expect(!client.isAlive)

        var status: Int32 = -1
        #expect(waitpid(pid, &status, 0) == pid)
        #expect(status == 0)
        #expect(!client.isAlive)
    }

    @Test("Without a pidfd, the pid is asked")
    func withoutPidfd() {
        #expect(ClientProcess(pid: getpid(), pidfd: -1).isAlive)
    }

    @Test("A debugger is named by a TracerPid line other than 0, wherever the line is; no line names none")
    func tracerLine() {
        func status(_ text: String) -> [UInt8] { Array(text.utf8) }
        #expect(!ClientProcess.namesTracer(status: status("Name:\tcat\nState:\tS\nTracerPid:\t0\nUid:\t0\n")))
        #expect(ClientProcess.namesTracer(status: status("Name:\tcat\nTracerPid:\t4242\nUid:\t0\n")))
        #expect(ClientProcess.namesTracer(status: status("TracerPid:\t7")), "first line, no newline after it")
        #expect(ClientProcess.namesTracer(status: status("Name:\tx\nTracerPid:  10\n")))
        #expect(!ClientProcess.namesTracer(status: status("Name:\tx\nTracerPid: \t0")))
        #expect(!ClientProcess.namesTracer(status: status("Name:\tTracerPid:\t9\nTracerPid:\t0\n")), "only a line that starts with it")
        #expect(!ClientProcess.namesTracer(status: status("Name:\tx\nUid:\t0\n")))
        #expect(!ClientProcess.namesTracer(status: []))
        #expect(ClientProcess.namesTracer(status: status("TracerPid:\t")), "an empty value is not 0")
        #expect(!ClientProcess(pid: getpid(), pidfd: -1).isTraced, "this test runs without a debugger")
    }

    @Test("A connection is suspect unless the process that connected holds it, close-on-exec, and every other holder runs the same program")
    func connectionHolders() throws {
        // `agent` stands for the agent's end; `mine` for the client's, held by this process.
        var ends: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &ends) == 0)
        let (agent, mine) = (ends[0], ends[1])
        defer { close(agent) }
        let me = ClientProcess(pid: getpid(), pidfd: ClientProcess.openPidfd(getpid()))
        #expect(ConnectionHolders.suspicion(socket: agent, client: me) == nil)
        // Kept across execve: a program this process runs would hold it.
        _ = fcntl(mine, F_SETFD, 0)
        #expect(ConnectionHolders.suspicion(socket: agent, client: me)?.contains("close-on-exec") == true)
        // Another program holds it too (a child that inherited it, then ran sleep).
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, mine, 7)
        var pid: pid_t = 0
        let arguments: [UnsafeMutablePointer<CChar>?] = ["/bin/sleep", "30"].map { (text: String) in strdup(text) } + [nil]
        defer { arguments.forEach { free($0) } }
        try #require(posix_spawn(&pid, "/bin/sleep", &actions, nil, arguments, environ) == 0)
        defer {
            kill(pid, SIGKILL)
            var status: Int32 = 0
            waitpid(pid, &status, 0)
        }
        _ = fcntl(mine, F_SETFD, FD_CLOEXEC)
        #expect(ConnectionHolders.suspicion(socket: agent, client: me)?.contains("another process (\(pid))") == true)
        // The child as the client: it holds it, not close-on-exec.
        let child = ClientProcess(pid: pid, pidfd: ClientProcess.openPidfd(pid))
        #expect(ConnectionHolders.suspicion(socket: agent, client: child)?.contains("close-on-exec") == true)
        // Once no process holds it any more, the connection is suspect whoever asks on it.
        close(mine)
        kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        #expect(ConnectionHolders.suspicion(socket: agent, client: me) != nil)
    }
}
