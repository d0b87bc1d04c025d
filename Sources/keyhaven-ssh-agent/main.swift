#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CHardening
import KeychainModel

/// keyhaven-ssh-agent: OpenSSH's agent protocol over the keys keyhavend holds (docs/ssh.md).

func fail(_ message: String, usage: Bool = false) -> Never {
    var text = message.isEmpty ? "" : "keyhaven-ssh-agent: \(message)\n"
    if usage { text += AgentOptions.usage + "\n" }
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}

func printOut(_ text: String) {
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

/// Closes every open descriptor but `kept`.
func closeDescriptors(keeping kept: Set<Int32>) {
    guard let folder = opendir("/proc/self/fd") else { return }
    var open: [Int32] = []
    while let entry = readdir(folder) {
        let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix(while: { $0 != 0 }), as: UTF8.self) }
        if let fd = Int32(name) { open.append(fd) }
    }
    closedir(folder)
    for fd in open where !kept.contains(fd) { close(fd) }
}

let options: AgentOptions
do {
    options = try AgentOptions(arguments: Array(CommandLine.arguments.dropFirst()))
} catch {
    fail(error.message, usage: true)
}
let shell = getenv("SHELL").map { String(cString: $0) } ?? ""
let syntax = options.syntax ?? (shell.hasSuffix("csh") ? .cShell : .bourne)

if options.kill {
    guard let text = getenv("SSH_AGENT_PID").map({ String(cString: $0) }) else { fail("SSH_AGENT_PID not set, cannot kill agent") }
    guard let pid = Int32(text), pid >= 1 else { fail("SSH_AGENT_PID=\"\(text)\", which is not a good PID") }
    guard kill(pid, SIGTERM) == 0 else { fail("kill: \(String(cString: strerror(errno)))") }
    printOut(ShellLines.killed(pid: pid, syntax: syntax))
    exit(0)
}

// Nothing here is secret, but the hand-over connection is this user's agent's: no other process
// of the user reads this one's memory or descriptors.
_ = kh_make_undumpable()

let listener: AgentListener
do throws(StoreError) {
    if let passed = try AgentListener.passed() { listener = passed } else { listener = try AgentListener(path: options.socketPath) }
} catch {
    fail(error.message)
}
let handover: Handover
do {
    handover = try Handover.register(defaultLifetime: options.defaultLifetime, keychain: options.keychain,
                                           approvalMinutes: options.approvalMinutes)
} catch {
    listener.remove()
    fail("cannot reach keyhavend: \(error.message)")
}

if options.debug || options.foreground {
    printOut(ShellLines.started(socket: listener.path, pid: getpid(), syntax: syntax))
    var loop = AgentLoop(listener: listener, handover: handover, options: options, parent: nil)
    loop.run()
}

let parent = getpid()
let child = fork()
guard child >= 0 else { fail("fork: \(String(cString: strerror(errno)))") }
if child != 0 {
    close(listener.fd)
    handover.close()
    if options.command.isEmpty {
        printOut(ShellLines.started(socket: listener.path, pid: child, syntax: syntax))
        exit(0)
    }
    setenv("SSH_AUTH_SOCK", listener.path, 1)
    setenv("SSH_AGENT_PID", String(child), 1)
    let argv = options.command.map { strdup($0) } + [nil]
    execvp(options.command[0], argv)
    fail("\(options.command[0]): \(String(cString: strerror(errno)))")
}

// The agent, detached from the terminal, the caller's folder and every descriptor it was given
// (a caller waiting for its pipes or sockets to close would wait as long as the agent runs).
setsid()
_ = chdir("/")
let null = open("/dev/null", O_RDWR)
if null >= 0 {
    for fd in [0, 1, 2] as [Int32] { dup2(null, fd) }
    if null > 2 { close(null) }
}
closeDescriptors(keeping: [0, 1, 2, listener.fd, handover.fd])
var loop = AgentLoop(listener: listener, handover: handover, options: options, parent: options.command.isEmpty ? nil : parent)
loop.run()
