import Foundation
import KeychainTestSupport
import Testing

/// Password prompts on a real pseudo-terminal: asked on /dev/tty, typed without echo.
@Suite(.freshKeychain())
struct PromptTests {
    /// Runs `keyhaven` as the session leader of a new pseudo-terminal, answering each prompt that
    /// contains `prompt` with `answer`; returns everything the terminal showed.
    func onTerminal(_ runner: CommandRunner, _ arguments: [String], answers: [(prompt: String, answer: String)]) throws -> (Int32, String) {
        // posix_openpt/unlockpt/ptsname, which the Glibc module hides, as Linux's ioctls.
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0, number: UInt32 = 0
        guard master >= 0, ioctl(master, 0x4004_5431 /* TIOCSPTLCK */, &unlock) == 0,
              ioctl(master, 0x8004_5430 /* TIOCGPTN */, &number) == 0 else {
            throw CocoaError(.fileNoSuchFile)
        }
        defer { close(master) }
        let slave = "/dev/pts/\(number)"
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        posix_spawnattr_setflags(&attributes, Int16(0x80))  // POSIX_SPAWN_SETSID: the terminal becomes its own
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, slave, O_RDWR, 0)
        posix_spawn_file_actions_adddup2(&actions, 0, 1)
        posix_spawn_file_actions_adddup2(&actions, 0, 2)
        let executable = CommandRunner.products.appendingPathComponent("keyhaven").path
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = runner.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid = pid_t()
        guard posix_spawn(&pid, executable, &actions, &attributes, argv, envp) == 0 else { throw CocoaError(.executableLoad) }

        var shown = ""
        var remaining = answers
        let deadline = Date().addingTimeInterval(20)
        var buffer = [UInt8](repeating: 0, count: 4096)
        while Date() < deadline {
            var poller = pollfd(fd: master, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, 100) > 0 {
                let n = read(master, &buffer, buffer.count)
                // Before the child opens its side, or after it closes it, the master reads EIO.
                guard n > 0 else {
                    var status: Int32 = 0
                    if waitpid(pid, &status, WNOHANG) == pid { return ((status >> 8) & 0xFF, shown) }
                    usleep(10_000)
                    continue
                }
                shown += String(decoding: buffer[0..<n], as: UTF8.self)
                if let next = remaining.first, shown.contains(next.prompt) {
                    _ = Array((next.answer + "\n").utf8).withUnsafeBytes { write(master, $0.baseAddress, $0.count) }
                    remaining.removeFirst()
                    shown += "|answered|"
                }
            }
            var status: Int32 = 0
            if waitpid(pid, &status, WNOHANG) == pid { return ((status >> 8) & 0xFF, shown) }
        }
        kill(pid, SIGKILL)
        Issue.record("no exit within 20 s; the terminal showed: \(shown)")
        throw CocoaError(.fileReadUnknown)
    }

    @Test("-w as the last option asks on the terminal; what is typed is not echoed")
    func promptedItemPassword() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        let (status, shown) = try onTerminal(k, ["add-generic-password", "-a", "a", "-s", "tty", "-w"],
                                             answers: [("password data for new item: ", "typed-secret")])
        #expect(status == 0)
        #expect(shown.contains("password data for new item: "))
        #expect(!shown.contains("typed-secret"))
        #expect(try k.run("find-generic-password", "-s", "tty", "-w").output == "typed-secret\n")
    }

    @Test("create-keychain and unlock-keychain without -p ask for the password on the terminal")
    func promptedKeychainPassword() throws {
        let k = try CommandRunner()
        defer { k.finish() }
        let created = try onTerminal(k, ["create-keychain", "ttykc"], answers: [("password for new keychain: ", "kc-secret")])
        #expect(created.0 == 0 && !created.1.contains("kc-secret"))
        #expect(try k.run("lock-keychain", "ttykc").status == 0)
        let wrong = try onTerminal(k, ["unlock-keychain", "ttykc"], answers: [("password to unlock", "nope")])
        #expect(wrong.0 == 51)
        let right = try onTerminal(k, ["unlock-keychain", "ttykc"], answers: [("password to unlock", "kc-secret")])
        #expect(right.0 == 0 && !right.1.contains("kc-secret"))
    }
}
