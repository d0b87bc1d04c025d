import Foundation
import KeychainStore
import KeyhavenAgentClient
import KeychainTestSupport
import Synchronization
import Testing

/// The agent: start and stop, one per socket, stale sockets, bad clients, many clients.
@Suite(.freshKeychain())
struct AgentTests {
    @Test("agent start, status and stop; the socket is 0600 in a 0700 folder; the next command starts a new agent")
    func lifecycle() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("agent", "status").status != 0)
        let started = try k.run("agent", "start")
        #expect(started.status == 0 && started.output.contains("keyhavend is running"))
        let socket = k.runtime + "/keyhaven/agent.sock"
        #expect((try FileManager.default.attributesOfItem(atPath: k.runtime + "/keyhaven")[.posixPermissions] as? Int) == 0o700)
        #expect((try FileManager.default.attributesOfItem(atPath: socket)[.posixPermissions] as? Int) == 0o600)
        #expect(try k.run("agent", "status").output.contains(TestHome.current!.path))
        #expect(try k.run("agent", "stop").output == "keyhavend stopped\n")
        Thread.sleep(forTimeInterval: 0.2)
        #expect(!FileManager.default.fileExists(atPath: socket))
        #expect(try k.run("add-generic-password", "-a", "a", "-w", "x").status == 0)
    }

    @Test("An agent restart is a reboot: after-first-unlock items need an unlock again")
    func restartForgetsKeys() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("create-keychain", "-p", "pw", "kc").status == 0)
        #expect(try k.run("add-generic-password", "-a", "a", "-w", "x", "kc").status == 0)
        #expect(try k.run("find-generic-password", "-a", "a", "-w", "kc").status == 0)
        #expect(try k.run("agent", "stop").status == 0)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(try k.run("find-generic-password", "-a", "a", "-w", "kc").status == 36)
        #expect(try k.run("unlock-keychain", "-p", "pw", "kc").status == 0)
        #expect(try k.run("find-generic-password", "-a", "a", "-w", "kc").output == "x\n")
    }

    @Test("A killed agent leaves a stale socket that the next agent replaces; no keychain is damaged")
    func killedAgent() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("add-generic-password", "-a", "a", "-w", "x").status == 0)
        let status = try k.run("agent", "status").output
        let pid = try #require(status.split(separator: " ").first(where: { $0.hasSuffix(")") }).flatMap { Int32($0.dropLast()) })
        #expect(kill(pid, SIGKILL) == 0)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(FileManager.default.fileExists(atPath: k.runtime + "/keyhaven/agent.sock"))
        #expect(try k.run("find-generic-password", "-a", "a", "-w").output == "x\n")
        #expect(try KeychainRegistry().defaultKeychain().integrityCheck() == "ok")
    }

    @Test("A command for another keychain home is refused by the running agent, with what to do")
    func otherHomeRefused() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("agent", "start").status == 0)
        let otherHome = try TemporaryFolder.make(prefix: "keyhaven-other-home")
        defer { try? FileManager.default.removeItem(atPath: otherHome) }
        let process = Process()
        process.executableURL = CommandRunner.products.appendingPathComponent("keyhaven")
        process.arguments = ["find-generic-password", "-a", "x"]
        var environment = k.environment
        environment["KEYHAVEN_HOME"] = otherHome
        process.environment = environment
        let err = Pipe()
        process.standardError = err
        try process.run()
        process.waitUntilExit()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == UInt8(truncatingIfNeeded: -25291))
        #expect(message.contains("serves \(TestHome.current!.path), not \(otherHome)"))
        #expect(message.contains("keyhaven agent stop"))
    }

    @Test("A second agent for the same socket refuses to start")
    func singleInstance() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("agent", "start").status == 0)
        let second = Process()
        second.executableURL = CommandRunner.products.appendingPathComponent("keyhavend")
        second.environment = k.environment
        let err = Pipe()
        second.standardError = err
        try second.run()
        second.waitUntilExit()
        #expect(second.terminationStatus == 1)
        #expect(String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).contains("already running"))
    }

    @Test("The socket appears only once the agent listens and handles SIGTERM: a client that sees it can connect")
    func socketAppearsListening() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        let socket = AgentSocket(path: k.runtime + "/keyhaven/agent.sock")
        for _ in 0..<10 {
            let agent = Process()
            agent.executableURL = CommandRunner.products.appendingPathComponent("keyhavend")
            agent.environment = k.environment
            try agent.run()
            let clock = ContinuousClock()
            let deadline = clock.now + .seconds(10)
            while !FileManager.default.fileExists(atPath: socket.path), clock.now < deadline { usleep(50) }
            #expect(throws: Never.self) { try AgentClient(socket: socket) }
            // A SIGTERM sent as soon as the socket appears stops the agent, which removes it.
            agent.terminate()
            let stopped = clock.now + .seconds(10)
            while agent.isRunning, clock.now < stopped { usleep(1_000) }
            #expect(!agent.isRunning, "SIGTERM was lost")
            if agent.isRunning { kill(agent.processIdentifier, SIGKILL) }
            agent.waitUntilExit()
            #expect(!FileManager.default.fileExists(atPath: socket.path))
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: socket.folder).allSatisfy { !$0.hasPrefix(".agent-") })
    }

    @Test("Kept connections: reused while the agent lives, dropped after it restarts, never shared by two callers")
    func connectionPool() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("agent", "start").status == 0)
        let socket = AgentSocket(path: k.runtime + "/keyhaven/agent.sock")
        let pool = AgentConnectionPool()
        defer { pool.removeAll() }
        let home = TestHome.current!.path
        // The pool's own count, not the process's descriptors: tests of other suites run in
        // this process at the same time and open files of their own.
        func kept() -> Int { pool.idleCount(socket: socket, home: home) }
        let first = try pool.send(.hello, socket: socket, home: home).hello().pid
        #expect(kept() == 1)
        for _ in 0..<20 { #expect(try pool.send(.hello, socket: socket, home: home).hello().pid == first) }
        #expect(kept() == 1)  // one connection, reused
        // An error answer leaves the connection usable.
        #expect(throws: StoreError.self) { try pool.send(.status(keychain: home + "/none.keychain-db"), socket: socket, home: home) }
        #expect(kept() == 1)

        #expect(try k.run("agent", "stop").status == 0)
        #expect(try k.run("agent", "start").status == 0)
        let second = try pool.send(.hello, socket: socket, home: home).hello().pid
        #expect(second != first)
        #expect(kept() == 1)  // the closed one was dropped, not kept

        // Many threads at once: each request gets a connection of its own; none is lost.
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 64) { _ in
            if (try? pool.send(.hello, socket: socket, home: home).hello().pid) != second { failures.withLock { $0 += 1 } }
        }
        #expect(failures.withLock { $0 } == 0)
        #expect(kept() >= 1 && kept() <= 8)  // at most 8 kept
    }

    @Test("A library connection is close-on-exec: a program the process runs does not inherit it")
    func connectionsCloseOnExec() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("agent", "start").status == 0)
        let client = try AgentClient(socket: AgentSocket(path: k.runtime + "/keyhaven/agent.sock"))
        let fd = client.detach()
        defer { close(fd) }
        #expect(fcntl(fd, F_GETFD) & FD_CLOEXEC != 0)
    }

    @Test("Library discovery says hello once per agent on the connection its calls use, follows a restart, and falls back when the agent is gone")
    func discoveryFollowsTheAgent() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        let home = KeychainHome(path: TestHome.current!.path)
        let previousRuntime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"]
        setenv("XDG_RUNTIME_DIR", k.runtime, 1)
        setenv("KEYHAVEN_AGENT", "auto", 1)
        defer {
            setenv("KEYHAVEN_AGENT", "off", 1)
            if let previousRuntime { setenv("XDG_RUNTIME_DIR", previousRuntime, 1) } else { unsetenv("XDG_RUNTIME_DIR") }
        }
        let socket = AgentSocket(path: k.runtime + "/keyhaven/agent.sock")
        #expect(try AgentDiscovery.socket(for: home) == nil)  // no agent: the embedded engine
        #expect(try k.run("agent", "start").status == 0)
        #expect(try AgentDiscovery.socket(for: home) == socket)
        #expect(AgentConnectionPool.shared.hasOpenIdleConnection(socket: socket, home: home.path))
        // One connection for the process: the hello went on the one its calls use.
        #expect(AgentConnectionPool.shared.idleCount(socket: socket, home: nil) == 0)
        #expect(try AgentDiscovery.socket(for: home) == socket)  // answered from the open connection
        #expect(try AgentDiscovery.socket(for: KeychainHome(path: "/elsewhere")) == nil)  // another home: asks, and is told no
        #expect(try k.run("agent", "stop").status == 0)
        Thread.sleep(forTimeInterval: 0.2)
        #expect(!AgentConnectionPool.shared.hasOpenIdleConnection(socket: socket, home: home.path))
        #expect(try AgentDiscovery.socket(for: home) == nil)
        #expect(try k.run("agent", "start").status == 0)
        #expect(try AgentDiscovery.socket(for: home) == socket)
    }

    @Test("Malformed and oversized messages end that client's connection and nothing else")
    func badClients() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("agent", "start").status == 0)
        let socket = AgentSocket(path: k.runtime + "/keyhaven/agent.sock")
        // Malformed frames of this version, and oversized ones: the connection closes, unanswered.
        for garbage in [[0xFF, 0xFF, 0xFF, 0xFF], [0, 0, 0, 3, AgentFraming.version, 0, 200], [0, 0, 0, 1, AgentFraming.version]] as [[UInt8]] {
            #expect(try exchangeRaw(garbage, socket: socket.path).isEmpty)
        }
        // Another version (a JSON frame is version 1): answered with what to do, then closed.
        for garbage in [[0, 0, 0, 5] + Array("hello".utf8), [0, 0, 0, 2, 0x7B, 0x7D]] as [[UInt8]] {
            let answer = try exchangeRaw(garbage, socket: socket.path)
            let failure = try AgentFraming.decode(AgentResponse.self, from: Array(answer.dropFirst(4))).error
            #expect(failure?.code == .wrongVersion && failure?.message.contains("keyhaven agent stop") == true)
        }
        // A client that connects and says nothing does not block others.
        let idle = try rawConnect(socket.path)
        defer { close(idle) }
        #expect(try AgentClient(socket: socket).send(.hello).hello().home == TestHome.current!.path)
        #expect(try k.run("add-generic-password", "-a", "still", "-w", "works").status == 0)
    }

    @Test("Limits: a request over 20 MiB is refused unread, clients past 64 are closed, a client that never reads holds one answer")
    func limits() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("agent", "start").status == 0)
        let socket = AgentSocket(path: k.runtime + "/keyhaven/agent.sock")
        let tooLong = UInt32(AgentFraming.maximumRequest + 1)
        #expect(try closesUnanswered([UInt8(tooLong >> 24), UInt8(tooLong >> 16 & 0xFF), UInt8(tooLong >> 8 & 0xFF), UInt8(tooLong & 0xFF)],
                                     socket: socket.path))
        // Pipelined requests are answered one at a time, in order.
        let hello = AgentFraming.encode(AgentRequest.hello)
        let pipelined = try rawConnect(socket.path)
        _ = (hello + hello + hello).withUnsafeBytes { send(pipelined, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        for _ in 0..<3 {
            var header = [UInt8](repeating: 0, count: 4)
            #expect(recv(pipelined, &header, 4, Int32(MSG_WAITALL)) == 4)
            var body = [UInt8](repeating: 0, count: header.reduce(0) { $0 << 8 | Int($1) })
            #expect(recv(pipelined, &body, body.count, Int32(MSG_WAITALL)) == body.count)
            #expect(try AgentFraming.decode(AgentResponse.self, from: body).get().hello().home == TestHome.current!.path)
        }
        close(pipelined)
        // A client that sends without reading: the agent stops reading it, its memory stays put,
        // and others are served meanwhile.
        let pid = try #require(try AgentClient(socket: socket).agentProcessID)
        let before = try residentKiB(pid)
        let flooding = try rawConnect(socket.path)
        var nonBlocking = fcntl(flooding, F_GETFL)
        nonBlocking |= O_NONBLOCK
        _ = fcntl(flooding, F_SETFL, nonBlocking)
        let flood = Array(repeating: hello, count: 1_000).flatMap { $0 }
        // Send whatever the socket takes, for a second and a half, then as long again. The agent's
        // answers fill the client's socket (it never reads them), and from then on the agent reads
        // nothing more from it: in the second window the socket takes nothing. An agent that kept
        // reading would go on taking requests (and queueing answers in its memory).
        let filled = sendWithoutReading(flood, on: flooding, for: .milliseconds(1_500))
        let more = sendWithoutReading(flood, on: flooding, for: .milliseconds(1_500))
        #expect(filled > 0)
        #expect(more < 64 << 10, "the agent went on reading a client that does not read its answers (\(more) bytes more)")
        #expect(try AgentClient(socket: socket).send(.hello).hello().home == TestHome.current!.path)
        #expect(try residentKiB(pid) - before < 32 * 1024, "the agent buffered what a client would not read")
        close(flooding)
        // Past 64 clients at once, the next is closed at once; a place that frees is taken again.
        // Each of the 64 announces a request of the largest size and sends ten bytes of it: the
        // agent takes memory as bytes come, not 64 x 20 MiB for what was announced.
        let largest = UInt32(AgentFraming.maximumRequest)
        let announced = [UInt8(largest >> 24), UInt8(largest >> 16 & 0xFF), UInt8(largest >> 8 & 0xFF), UInt8(largest & 0xFF)] + [UInt8](repeating: 4, count: 10)
        // The connections above are gone from the agent first (a loaded machine can take seconds
        // to end their threads): until then they hold places among the 64.
        let socketsBefore = settledSockets(pid)
        let beforeHeld = try residentKiB(pid)
        let held = try (0..<AgentFraming.maximumConnections).map { _ in try rawConnect(socket.path) }
        for fd in held { _ = announced.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } }
        // Every one of them accepted before the next comes (a loaded machine can take seconds),
        // and their bytes read.
        let accepted = Date().addingTimeInterval(20)
        while openSockets(pid) - socketsBefore < AgentFraming.maximumConnections && Date() < accepted { usleep(50_000) }
        usleep(500_000)
        #expect(try residentKiB(pid) - beforeHeld < 64 * 1024, "the agent took memory for requests announced, not sent")
        #expect(try closesUnanswered(hello, socket: socket.path))
        held.forEach { close($0) }
        // Each closed connection's thread notices and ends; on a loaded machine that can take a
        // while for 64 of them (0.8 s seen beside a build), so the new client tries for up to 10 s.
        let deadline = Date().addingTimeInterval(10)
        var answered: (home: String, pid: Int32)?
        while answered == nil && Date() < deadline {
            answered = try? AgentClient(socket: socket).send(.hello).hello()
            if answered == nil { usleep(100_000) }
        }
        #expect(answered?.home == TestHome.current!.path)
    }

    /// Whether the agent closes a new connection that sent `bytes`, without an answer (within 10 s).
    private func closesUnanswered(_ bytes: [UInt8], socket path: String) throws -> Bool {
        let fd = try rawConnect(path)
        defer { close(fd) }
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = recv(fd, &buffer, buffer.count, 0)
        // Closed with our bytes unread, the kernel resets the connection instead of ending it.
        return n == 0 || (n < 0 && errno == ECONNRESET)
    }

    /// How many sockets the process has open once the count stops falling (at most 20 s).
    private func settledSockets(_ pid: Int32) -> Int {
        let deadline = Date().addingTimeInterval(20)
        var count = openSockets(pid)
        var steadySince = Date()
        while Date() < deadline && Date().timeIntervalSince(steadySince) < 1 {
            usleep(100_000)
            let now = openSockets(pid)
            if now != count { count = now; steadySince = Date() }
        }
        return count
    }

    /// How many sockets the process has open.
    private func openSockets(_ pid: Int32) -> Int {
        let folder = "/proc/\(pid)/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
        return entries.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0))?.hasPrefix("socket:") == true }.count
    }

    private func residentKiB(_ pid: Int32) throws -> Int {
        let status = try String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)
        let line = try #require(status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") })
        return Int(line.split(separator: " ", omittingEmptySubsequences: true)[1]) ?? 0
    }

    @Test("Fifty clients at once")
    func manyClients() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        #expect(try k.run("agent", "start").status == 0)
        let socket = AgentSocket(path: k.runtime + "/keyhaven/agent.sock")
        let home = TestHome.current!.path
        let failures = Mutex(0)
        DispatchQueue.concurrentPerform(iterations: 50) { i in
            do {
                let client = try AgentClient(socket: socket)
                let item = NewItem(itemClass: .genericPassword, attributes: ["acct": .string("client-\(i)")], secret: Data("\(i)".utf8))
                // The test program's own group: the agent grants no other without the user.
                let caller = Caller(accessGroups: [AccessGroupConfiguration.defaultGroup])
                _ = try client.send(.add(keychain: home + "/login.keychain-db", item: item, caller: caller))
                var query = ItemQuery(itemClass: .genericPassword)
                query.criteria = ["acct": .string("client-\(i)")]
                let found = try client.send(.find(keychains: [home + "/login.keychain-db"], query: query, caller: caller, withSecrets: true))
                if try found.items().first?.secret != Data("\(i)".utf8) { failures.withLock { $0 += 1 } }
            } catch {
                failures.withLock { $0 += 1 }
            }
        }
        #expect(failures.withLock { $0 } == 0)
    }

    /// Sends bytes on a new connection and reads until the agent closes it.
    private func exchangeRaw(_ bytes: [UInt8], socket path: String) throws -> [UInt8] {
        let fd = try rawConnect(path)
        defer { close(fd) }
        _ = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        var received: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while case let n = recv(fd, &buffer, buffer.count, 0), n > 0 { received += buffer.prefix(n) }
        return received
    }
}

/// A bare connection to the agent's socket (no checks, no framing).
func rawConnect(_ path: String) throws -> Int32 {
    // Close-on-exec, as every client's must be: the agent trusts no program on a connection that
    // is not (docs/access.md, "Which program is asking").
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        for (i, byte) in path.utf8.enumerated() { raw[i] = byte }
    }
    let result = withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
    guard result == 0 else { throw CocoaError(.fileNoSuchFile) }
    return fd
}

/// Sends `bytes` again and again on the non-blocking `fd` for `duration`, never reading; the bytes
/// the socket took. (Once a client's socket is full of answers it does not read, an agent that
/// stops reading it takes nothing more.)
func sendWithoutReading(_ bytes: [UInt8], on fd: Int32, for duration: Duration) -> Int {
    var accepted = 0
    let clock = ContinuousClock()
    let until = clock.now + duration
    while clock.now < until {
        let sent = bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
        if sent > 0 { accepted += sent } else { usleep(10_000) }
    }
    return accepted
}
