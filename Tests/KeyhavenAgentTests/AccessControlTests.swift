import Foundation
import KeychainStore
import KeychainTestSupport
import Synchronization
import Testing

/// Per-application access (docs/access.md): two distinct programs, the test helper and a modified
/// copy of it, against one agent; prompts answered by a scripted pinentry (its answer and the
/// password it types are files the test writes; what it was told is logged). The agent, the
/// programs and the pinentry run as an ordinary user the test makes (root sets the stage: the
/// user, and the executables in a folder only root writes).
@Suite(.freshKeychain(), .serialized, .enabled(if: LocalUser.isAvailable, LocalUser.skipReason))
struct AccessControlTests {
    /// One agent with a scripted pinentry, the helper and a modified copy of it.
    final class Setup: Sendable {
        let session: UserKeychainSession
        let runner: CommandRunner
        let folder: String
        let helper: String
        let copy: String
        /// The runner's environment (read here: the test's home is a task local, not a thread's).
        let environment: [String: String]

        /// `pinentry`: the program the agent runs (the scripted one by default).
        /// `turns`: the agent's turns for look-ups (``LookUpTurns``; as many as the CPUs when nil).
        init(timeout: Int = 20, pinentry: String? = nil, turns: Int? = nil) throws {
            session = try UserKeychainSession(try LocalUser.make("keyhaven-access-user"),
                                              executables: ["keyhaven", "keyhavend", "keyhaven-pki", "keyhaven-test-helper"])
            // As the kernel names it (the temporary folder's path may have a doubled slash); the
            // user's, since its pinentry writes there.
            folder = URL(fileURLWithPath: try session.user.makeFolder(prefix: "keyhaven-access")).resolvingSymlinksInPath().path
            helper = URL(fileURLWithPath: session.binaries.path("keyhaven-test-helper")).resolvingSymlinksInPath().path
            copy = URL(fileURLWithPath: session.binaries.path("other-program")).resolvingSymlinksInPath().path
            try ExecutableFile.copy(helper, to: copy, changed: true)
            let script = """
                #!/bin/sh
                # A pinentry that answers from files: answer (ok, notok, cancel, crash, hang, unshown), pin.
                dir='\(folder)'
                echo "OK Pleased to meet you"
                while IFS= read -r line; do
                  case "$line" in GETPIN*) ;; *) echo "$line" >> "$dir/log" ;; esac
                  case "$line" in
                    CONFIRM*)
                      case "$(cat "$dir/answer")" in
                        ok) echo OK ;;
                        notok) echo "ERR 83886194 Not confirmed <Pinentry>" ;;
                        crash) exit 3 ;;
                        unshown) echo "ERR 83918950 Inappropriate ioctl for device <Pinentry>" ;;
                        hang) echo $$ > "$dir/hanging"; exec sleep 600 ;;
                        *) echo "ERR 83886179 Operation cancelled <Pinentry>" ;;
                      esac ;;
                    GETPIN*)
                      if [ "$(cat "$dir/pin")" = "-cancel-" ]; then echo "ERR 83886179 Operation cancelled <Pinentry>";
                      else echo "D $(cat "$dir/pin")"; echo OK; fi ;;
                    BYE*) echo OK; exit 0 ;;
                    *) echo OK ;;
                  esac
                done
                """
            try ExecutableFile.write(script, to: folder + "/pinentry", mode: 0o755)
            try "cancel".write(toFile: folder + "/answer", atomically: true, encoding: .utf8)
            try "".write(toFile: folder + "/pin", atomically: true, encoding: .utf8)
            var runner = CommandRunner(as: session)
            runner.extraEnvironment = ["KEYHAVEN_PINENTRY": pinentry ?? folder + "/pinentry", "KEYHAVEN_PROMPT_TIMEOUT": String(timeout)]
            if let turns { runner.extraEnvironment["KEYHAVEN_AGENT_LOOKUP_TURNS"] = String(turns) }
            self.runner = runner
            environment = runner.environment
            #expect(try runner.run("agent", "start").status == 0)
        }

        func finish() {
            runner.finish()
            session.remove()
            try? FileManager.default.removeItem(atPath: folder)
        }

        /// The scripted pinentry's next answer, and the password it types.
        func answer(_ answer: String, pin: String = "") throws {
            try answer.write(toFile: folder + "/answer", atomically: true, encoding: .utf8)
            try pin.write(toFile: folder + "/pin", atomically: true, encoding: .utf8)
            try? FileManager.default.removeItem(atPath: folder + "/log")
        }

        /// How many prompts the pinentry showed since the last answer was set, and what they said.
        var prompts: (count: Int, text: String) {
            let log = (try? String(contentsOfFile: folder + "/log", encoding: .utf8)) ?? ""
            return (log.components(separatedBy: "\n").filter { $0.hasPrefix("CONFIRM") }.count, log)
        }

        /// Runs `program item OPERATION ACCOUNT` through the agent, with no terminal; `display`
        /// gives it a display (so the agent may prompt), `groups` its KEYHAVEN_ACCESS_GROUPS.
        /// `wrapper`: a program that runs `program` (strace); `extra`: more environment.
        func item(_ program: String, _ operation: String, _ account: String, display: Bool = false,
                  groups: String? = nil, reuse: String? = nil, wrapper: [String] = [],
                  extra: [String: String] = [:]) throws -> (status: Int32, data: String?) {
            let out = Pipe()
            let arguments = Array(wrapper.dropFirst()) + (wrapper.isEmpty ? [] : [program]) + ["item", operation, account]
            let process = try start(wrapper.first ?? program, arguments, display: display, groups: groups, reuse: reuse,
                                    extra: extra, output: out)
            let output = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            let lines = output.split(separator: "\n")
            let status = lines.first { $0.hasPrefix("status ") }.flatMap { Int32($0.dropFirst(7)) } ?? 9999
            return (status, lines.first { $0.hasPrefix("data ") }.map { String($0.dropFirst(5)) })
        }

        /// Starts `program ARGUMENTS` as the user, with no terminal.
        func start(_ program: String, _ arguments: [String], display: Bool, groups: String?,
                   reuse: String? = nil, extra: [String: String] = [:], output: Pipe?) throws -> Process {
            var environment = self.environment
            environment["KEYHAVEN_AGENT"] = "on"
            environment["DISPLAY"] = display ? ":99" : nil
            environment["WAYLAND_DISPLAY"] = nil
            environment["KEYHAVEN_ACCESS_GROUPS"] = groups
            environment["KEYHAVEN_TEST_TRUST"] = copy
            environment["KEYHAVEN_TEST_REUSE"] = reuse
            environment.merge(extra) { _, new in new }
            let process = session.user.process(program, arguments, environment: environment)
            if let output { process.standardOutput = output } else { process.standardOutput = FileHandle.nullDevice }
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            return process
        }

        /// The helper adds `account`; the copy is granted the helper's group (so it finds the item,
        /// and is not trusted with it).
        func itemSharedWithCopy(_ account: String) throws {
            #expect(try item(helper, "add", account).status == 0)
            #expect(try runner.run("access", "grant", "-T", copy, "-G", helperGroup).status == 0)
        }

        /// The helper's own access group (its application group).
        var helperGroup: String { ApplicationIdentityReader.applicationGroup(path: helper) }
    }

    @Test("The creator reads without a prompt; another program is refused without a way to ask, prompted with one, and Always Allow lasts")
    func creatorAndAnotherProgram() throws {
        let s = try Setup()
        defer { s.finish() }
        #expect(try s.item(s.helper, "add", "a1").status == 0)
        #expect(try s.item(s.helper, "read", "a1") == (0, "a1"))
        #expect(s.prompts.count == 0)
        // Another program does not even find it: the item is in the helper's own group.
        #expect(try s.item(s.copy, "read", "a1", display: true).status == -25300)
        // Given the group (as the user would, with the command), it finds the item but may not use it.
        #expect(try s.runner.run("access", "grant", "-T", s.copy, "-G", s.helperGroup).status == 0)
        #expect(try s.item(s.copy, "read", "a1", groups: s.helperGroup).status == -25308)   // no terminal, no display
        #expect(try s.item(s.copy, "read-noui", "a1", display: true, groups: s.helperGroup).status == -25308)
        #expect(try s.item(s.copy, "read-quiet", "a1", display: true, groups: s.helperGroup).status == -25308)
        #expect(try s.item(s.copy, "read-skip", "a1", display: true, groups: s.helperGroup).status == -25300)
        #expect(s.prompts.count == 0)
        // Allow: this once.
        try s.answer("ok")
        #expect(try s.item(s.copy, "read", "a1", display: true, groups: s.helperGroup) == (0, "a1"))
        let prompt = s.prompts
        #expect(prompt.count == 1 && prompt.text.contains("other-program") && prompt.text.contains("item a1")
                && prompt.text.contains("login.keychain-db") && prompt.text.contains("SETNOTOK Always Allow"))
        #expect(!prompt.text.contains("GETPIN"))  // no password on this keychain
        try s.answer("ok")
        #expect(try s.item(s.copy, "read", "a1", display: true, groups: s.helperGroup) == (0, "a1"))
        #expect(s.prompts.count == 1)
        // Deny: errSecAuthFailed, and nothing changes.
        try s.answer("cancel")
        #expect(try s.item(s.copy, "update", "a1", display: true, groups: s.helperGroup).status == -25293)
        #expect(try s.item(s.copy, "delete", "a1", display: true, groups: s.helperGroup).status == -25293)
        #expect(try s.item(s.helper, "read", "a1") == (0, "a1"))
        // Always Allow: for good, with no prompt next time.
        try s.answer("notok")
        #expect(try s.item(s.copy, "read", "a1", display: true, groups: s.helperGroup) == (0, "a1"))
        try s.answer("cancel")
        #expect(try s.item(s.copy, "read-noui", "a1", groups: s.helperGroup) == (0, "a1"))
        #expect(try s.item(s.copy, "update", "a1", groups: s.helperGroup).status == 0)
        #expect(s.prompts.count == 0)
        let listed = try s.runner.run("access", "list", "-s", "access", "-a", "a1")
        #expect(listed.output.contains(s.copy) && listed.output.contains(s.helper))
    }

    @Test("add-generic-password -T '' -T PROGRAM trusts PROGRAM alone, not keyhaven or the other keyhaven programs; without -T '' keyhaven is trusted too")
    func emptyThenProgram() throws {
        let s = try Setup()
        defer { s.finish() }
        #expect(try s.runner.run("add-generic-password", "-s", "access", "-a", "alone", "-w", "x", "-T", "", "-T", s.copy).status == 0)
        let alone = try s.runner.run("access", "list", "-s", "access", "-a", "alone").output
        let applications = alone.split(separator: "\n").filter { $0.hasPrefix("    \"") }
        #expect(applications.count == 1 && applications[0].hasPrefix("    \"\(s.copy)\""), "\(alone)")
        // keyhaven itself is not trusted: with no one to ask, it is refused the password.
        #expect(try s.runner.run("find-generic-password", "-s", "access", "-a", "alone", "-w").status != 0)
        #expect(try s.runner.run("add-generic-password", "-s", "access", "-a", "both", "-w", "x", "-T", s.copy).status == 0)
        let both = try s.runner.run("access", "list", "-s", "access", "-a", "both").output
        #expect(both.contains("/keyhaven\"") && both.contains(s.copy), "\(both)")
        #expect(try s.runner.run("find-generic-password", "-s", "access", "-a", "both", "-w").output == "x\n")
    }

    @Test("A modified creator is a new application: prompted for its own items")
    func modifiedCreator() throws {
        let s = try Setup()
        defer { s.finish() }
        let creator = s.folder + "/creator"
        try FileManager.default.copyItem(atPath: s.helper, toPath: creator)
        #expect(try s.item(creator, "add", "m1").status == 0)
        #expect(try s.item(creator, "read-noui", "m1") == (0, "m1"))
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: creator))
        handle.seekToEndOfFile()
        handle.write(Data([1]))
        try handle.close()
        // The same path, so the same group: it finds the item, and may not use it.
        #expect(try s.item(creator, "read-noui", "m1").status == -25308)
        try s.answer("ok")
        #expect(try s.item(creator, "read", "m1", display: true) == (0, "m1"))
        #expect(s.prompts.count == 1)
    }

    @Test("An access group claimed without a grant is refused; the user can allow it once or for good")
    func groupsNeedGrants() throws {
        let s = try Setup()
        defer { s.finish() }
        #expect(try s.item(s.helper, "add", "g1", groups: "team.shared").status == -34018)
        #expect(try s.item(s.helper, "add", "g1", display: true, groups: "team.shared").status == -25293)  // denied
        #expect(s.prompts.text.contains("access group \"team.shared\""))
        try s.answer("ok")
        #expect(try s.item(s.helper, "add", "g1", display: true, groups: "team.shared").status == 0)
        #expect(try s.item(s.helper, "read-noui", "g1", groups: "team.shared").status == -34018)  // once only
        try s.answer("notok")
        #expect(try s.item(s.helper, "read", "g1", display: true, groups: "team.shared") == (0, "g1"))
        #expect(try s.item(s.helper, "read-noui", "g1", groups: "team.shared") == (0, "g1"))
        #expect(try s.runner.run("access", "list", "--groups").output.contains("group: \"team.shared\""))
        #expect(try s.runner.run("access", "revoke", "-T", s.helper, "-G", "team.shared").status == 0)
        #expect(try s.item(s.helper, "read-noui", "g1", groups: "team.shared").status == -34018)
        // The agent's own groups are never given, and nobody writes into them (a forged grant).
        #expect(try s.runner.run("access", "grant", "-T", s.helper, "-G", "keyhaven.access").status != 0)
        #expect(try s.runner.run("add-generic-password", "--access-group", "keyhaven.access", "-s", "keyhaven.access-grant",
                                 "-a", "forged", "-w", "x").status != 0)
        #expect(try s.runner.run("add-generic-password", "--access-group", "com.keyhaven.sync", "-s", "x", "-a", "x", "-w", "x").status != 0)
        #expect(try s.item(s.helper, "read-noui", "g1", groups: "com.keyhaven.sync").status == -34018)
    }

    @Test("With a password: Allow asks for it; a wrong one is errSecAuthFailed, a cancelled one errSecUserCanceled")
    func passwordAfterAllow() throws {
        let s = try Setup()
        defer { s.finish() }
        #expect(try s.item(s.helper, "add", "p1").status == 0)
        #expect(try s.runner.run("set-keychain-password", "-o", "", "-p", "pw").status == 0)
        #expect(try s.runner.run("access", "grant", "-T", s.copy, "-G", s.helperGroup, "-p", "pw").status == 0)
        try s.answer("ok", pin: "wrong")
        #expect(try s.item(s.copy, "read", "p1", display: true, groups: s.helperGroup).status == -25293)
        try s.answer("notok", pin: "-cancel-")
        #expect(try s.item(s.copy, "read", "p1", display: true, groups: s.helperGroup).status == -128)
        #expect(try s.item(s.copy, "read-noui", "p1", groups: s.helperGroup).status == -25308)  // nothing remembered
        try s.answer("notok", pin: "pw")
        #expect(try s.item(s.copy, "read", "p1", display: true, groups: s.helperGroup) == (0, "p1"))
        #expect(try s.item(s.copy, "read-noui", "p1", groups: s.helperGroup) == (0, "p1"))
        // Changes through the command need the password too.
        #expect(try s.runner.run("access", "grant", "-T", s.helper, "-G", "x", "-p", "nope").status == 51)
    }

    @Test("A client that dies while its prompt is open ends the prompt; nothing changes")
    func clientDiesDuringPrompt() throws {
        let s = try Setup(timeout: 60)
        defer { s.finish() }
        try s.itemSharedWithCopy("d1")
        try s.answer("hang")
        let process = try s.start(s.copy, ["item", "delete", "d1"], display: true, groups: s.helperGroup, output: nil)
        Thread.sleep(forTimeInterval: 1.5)
        #expect(s.prompts.count == 1)
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        Thread.sleep(forTimeInterval: 0.5)
        // The prompt is gone (another would be refused while it is open), and the item is there.
        try s.answer("ok")
        #expect(try s.item(s.copy, "read", "d1", display: true, groups: s.helperGroup) == (0, "d1"))
        #expect(try s.item(s.helper, "read", "d1") == (0, "d1"))
    }

    @Test("A pinentry that crashes or hangs changes nothing")
    func brokenPrompts() throws {
        let s = try Setup(timeout: 2)
        defer { s.finish() }
        try s.itemSharedWithCopy("b1")
        try s.answer("crash")
        #expect(try s.item(s.copy, "read", "b1", display: true, groups: s.helperGroup).status == -128)
        try s.answer("hang")
        let started = Date()
        #expect(try s.item(s.copy, "delete", "b1", display: true, groups: s.helperGroup).status == -128)
        #expect(Date().timeIntervalSince(started) < 30)
        #expect(try s.item(s.helper, "read", "b1") == (0, "b1"))
        #expect(try s.item(s.copy, "read-noui", "b1", groups: s.helperGroup).status == -25308)
    }

    @Test("An open prompt holds no look-up's turn: with one turn for look-ups, another program reads meanwhile")
    func promptHoldsNoTurn() throws {
        // One turn for look-ups (LookUpTurns): a prompt that held it would hold up the creator's
        // read until the prompt timed out (20 s).
        let s = try Setup(timeout: 20, turns: 1)
        defer { s.finish() }
        try s.itemSharedWithCopy("h1")
        try s.answer("hang")
        let thread = Thread { _ = try? s.item(s.copy, "read", "h1", display: true, groups: s.helperGroup) }
        thread.start()
        Thread.sleep(forTimeInterval: 1.5)
        #expect(s.prompts.count == 1)
        let started = Date()
        #expect(try s.item(s.helper, "read", "h1") == (0, "h1"))
        #expect(Date().timeIntervalSince(started) < 10, "the creator's read waited for the prompt")
        if let hanging = try? String(contentsOfFile: s.folder + "/hanging", encoding: .utf8), let pid = Int32(hanging.trimmingCharacters(in: .whitespacesAndNewlines)) {
            kill(pid, SIGKILL)
        }
    }

    @Test("A pinentry that cannot show its prompt (an error that is not Cancel) refuses with errSecInteractionNotAllowed, not as the user's Deny")
    func pinentryCannotShow() throws {
        let s = try Setup()
        defer { s.finish() }
        try s.itemSharedWithCopy("n1")
        try s.answer("unshown")
        #expect(try s.item(s.copy, "read", "n1", display: true, groups: s.helperGroup).status == -25308)
        #expect(s.prompts.count == 1)
        try s.answer("cancel")
        #expect(try s.item(s.copy, "read", "n1", display: true, groups: s.helperGroup).status == -25293)
    }

    @Test("One prompt at a time per program: a second request meanwhile fails at once")
    func noPromptStorm() throws {
        let s = try Setup(timeout: 120)
        defer { s.finish() }
        try s.itemSharedWithCopy("s1")
        try s.answer("hang")
        let first = Mutex<Int32?>(nil)
        let thread = Thread {
            let status = (try? s.item(s.copy, "read", "s1", display: true, groups: s.helperGroup).status) ?? 9999
            first.withLock { $0 = status }
        }
        thread.start()
        Thread.sleep(forTimeInterval: 1)
        var statuses: [Int32] = []
        for _ in 0..<10 { statuses.append(try s.item(s.copy, "read", "s1", display: true, groups: s.helperGroup).status) }
        #expect(statuses.allSatisfy { $0 == -25308 })
        // The creator is not held up meanwhile.
        #expect(try s.item(s.helper, "read", "s1") == (0, "s1"))
        #expect(first.withLock { $0 } == nil)
        // The pinentry dies: the first request is answered.
        let hanging = try String(contentsOfFile: s.folder + "/hanging", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        kill(try #require(Int32(hanging)), SIGKILL)
        while first.withLock({ $0 }) == nil { Thread.sleep(forTimeInterval: 0.1) }
        #expect(first.withLock { $0 } == -128)
    }

    @Test("security(1)'s -T and -A: the named programs are trusted, -A trusts every program")
    func commandAccessOptions() throws {
        let s = try Setup()
        defer { s.finish() }
        let group = s.helperGroup
        #expect(try s.runner.run("add-generic-password", "-s", "access", "-a", "t1", "-w", "t1", "-T", s.copy, "--access-group", group).status == 0)
        #expect(try s.runner.run("add-generic-password", "-s", "access", "-a", "t2", "-w", "t2", "-A", "--access-group", group).status == 0)
        #expect(try s.runner.run("add-generic-password", "-s", "access", "-a", "t3", "-w", "t3", "--access-group", group).status == 0)
        #expect(try s.item(s.copy, "read-noui", "t1", groups: group).status == -34018)  // the group first
        #expect(try s.runner.run("access", "grant", "-T", s.copy, "-G", group).status == 0)
        #expect(try s.item(s.copy, "read-noui", "t1", groups: group) == (0, "t1"))
        #expect(try s.item(s.copy, "read-noui", "t2", groups: group) == (0, "t2"))
        #expect(try s.item(s.copy, "read-noui", "t3", groups: group).status == -25308)
        #expect(try s.item(s.helper, "read-noui", "t1").status == -25308)  // its group, not its trust
        // keyhaven itself reads what it added, and is prompted for the rest.
        #expect(try s.runner.run("find-generic-password", "-s", "access", "-a", "t3", "-w").output == "t3\n")
        #expect(try s.item(s.helper, "add", "t4").status == 0)
        #expect(try s.runner.run("find-generic-password", "-s", "access", "-a", "t4", "-w").status == UInt8(truncatingIfNeeded: -25308))
        // access grant/revoke -T on items.
        #expect(try s.runner.run("access", "grant", "-T", s.copy, "-s", "access", "-a", "t3").output == "1 item changed.\n")
        #expect(try s.item(s.copy, "read-noui", "t3", groups: group) == (0, "t3"))
        #expect(try s.runner.run("access", "revoke", "-T", s.copy, "-s", "access", "-a", "t3").status == 0)
        #expect(try s.item(s.copy, "read-noui", "t3", groups: group).status == -25308)
        #expect(try s.runner.run("add-internet-password", "-s", "example.com", "-a", "i1", "-w", "i1", "-G", group, "-T", s.copy).status == 0)
        #expect(try s.runner.run("access", "list", "-c", "inet", "-s", "example.com").output.contains(s.copy))
    }

    @Test("kSecAttrAccess from SecAccessCreate on SecItemAdd: the programs it lists are trusted; SecACLSetContents with no list opens the item")
    func accessObjectsFromTheAPI() throws {
        let s = try Setup()
        defer { s.finish() }
        #expect(try s.runner.run("access", "grant", "-T", s.copy, "-G", s.helperGroup).status == 0)
        #expect(try s.item(s.helper, "add-trusting", "k1").status == 0)
        #expect(try s.item(s.helper, "add-any", "k2").status == 0)
        #expect(try s.item(s.helper, "add", "k3").status == 0)
        #expect(try s.item(s.copy, "read-noui", "k1", groups: s.helperGroup) == (0, "k1"))
        #expect(try s.item(s.copy, "read-noui", "k2", groups: s.helperGroup) == (0, "k2"))
        #expect(try s.item(s.copy, "read-noui", "k3", groups: s.helperGroup).status == -25308)
        let listed = try s.runner.run("access", "list", "-s", "access", "-a", "k2")
        #expect(listed.output.contains("access: any application"))
    }

    @Test("User presence: each use asks for the keychain's password, once per reuse duration; biometry fails as with none enrolled")
    func userPresence() throws {
        let s = try Setup()
        defer { s.finish() }
        #expect(try s.runner.run("set-keychain-password", "-o", "", "-p", "pw").status == 0)
        #expect(try s.item(s.helper, "add-presence", "u1").status == 0)
        #expect(try s.item(s.helper, "add-biometry", "u2").status == 0)
        #expect(try s.item(s.helper, "add-either", "u3").status == 0)
        // The creator too: presence is not trust.
        #expect(try s.item(s.helper, "read-noui", "u1").status == -25308)
        #expect(try s.item(s.helper, "read-skip", "u1").status == -25300)
        try s.answer("cancel", pin: "pw")
        #expect(try s.item(s.helper, "read", "u1", display: true) == (0, "u1"))
        #expect(s.prompts.text.contains("asks for you each time") && s.prompts.count == 0)  // the password only: no confirmation
        try s.answer("cancel", pin: "wrong")
        #expect(try s.item(s.helper, "read", "u1", display: true).status == -25293)
        try s.answer("cancel", pin: "-cancel-")
        #expect(try s.item(s.helper, "read", "u1", display: true).status == -128)
        // Two uses in one process: two password entries, or one within the reuse duration.
        try s.answer("cancel", pin: "pw")
        #expect(try s.item(s.helper, "read-twice", "u1", display: true, reuse: "0") == (0, "u1"))
        let everyUse = try String(contentsOfFile: s.folder + "/log", encoding: .utf8).components(separatedBy: "asks for you").count - 1
        try s.answer("cancel", pin: "pw")
        #expect(try s.item(s.helper, "read-twice", "u1", display: true, reuse: "60") == (0, "u1"))
        let reused = try String(contentsOfFile: s.folder + "/log", encoding: .utf8).components(separatedBy: "asks for you").count - 1
        #expect(everyUse == 2 && reused == 1)
        // Biometry alone cannot be met here; biometry or the passcode asks for the password.
        #expect(try s.item(s.helper, "read", "u2", display: true).status == -25293)
        try s.answer("cancel", pin: "pw")
        #expect(try s.item(s.helper, "read", "u3", display: true) == (0, "u3"))
    }

    @Test("A real pinentry-curses on the client's terminal (a tmux pane): the prompt is drawn there and Enter allows once")
    func realPinentryCurses() throws {
        let tmux = "/usr/bin/tmux", curses = "/usr/bin/pinentry-curses"
        try #require(FileManager.default.isExecutableFile(atPath: tmux) && FileManager.default.isExecutableFile(atPath: curses),
                     "scripts/bootstrap installs tmux and pinentry-curses")
        let s = try Setup(pinentry: curses)
        defer { s.finish() }
        try s.itemSharedWithCopy("c1")
        let socket = s.folder + "/tmux.sock"
        var environment = s.environment
        environment["TERM"] = "xterm"
        environment["SHELL"] = "/bin/sh"  // the user's login shell is nologin: tmux runs the command with this one
        func tmuxRun(_ arguments: [String]) throws -> String {
            let process = s.session.user.process(tmux, ["-S", socket] + arguments, environment: environment)
            let out = Pipe()
            process.standardOutput = out
            process.standardError = FileHandle.nullDevice
            process.standardInput = FileHandle.nullDevice
            try process.run()
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return text
        }
        func waitForPane(_ text: String) throws -> String {
            var pane = ""
            for _ in 0..<100 {
                pane = try tmuxRun(["capture-pane", "-p", "-t", "t"])
                if pane.contains(text) { break }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return pane
        }
        defer { _ = try? tmuxRun(["kill-server"]) }
        let home = s.session.home
        let command = "env KEYHAVEN_HOME='\(home)' XDG_RUNTIME_DIR='\(s.runner.runtime)' KEYHAVEN_AGENT=on "
            + "KEYHAVEN_ACCESS_GROUPS='\(s.helperGroup)' '\(s.copy)' item read c1; sleep 30"
        // Started with posix_spawn (as the user): Foundation's Process waits for the server tmux
        // leaves running.
        var pid: pid_t = 0
        let user = s.session.user
        let words: [String] = ["/usr/bin/setpriv", "--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "--",
                               tmux, "-S", socket, "new-session", "-d", "-s", "t", "-x", "110", "-y", "30", command]
        let arguments: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
        let variables: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { for argument in arguments + variables { free(argument) } }
        #expect(posix_spawn(&pid, "/usr/bin/setpriv", nil, nil, arguments, variables) == 0)
        var status: Int32 = 0
        waitpid(pid, &status, 0)
        let prompt = try waitForPane("wants to use")
        #expect(prompt.contains("other-program") && prompt.contains("item c1") && prompt.contains("Always Allow"), "\(prompt)")
        _ = try tmuxRun(["send-keys", "-t", "t", "Enter"])
        let answered = try waitForPane("data c1")
        #expect(answered.contains("status 0") && answered.contains("data c1"), "\(answered)")
        // Allowed once: still not trusted.
        #expect(try s.item(s.copy, "read-noui", "c1", groups: s.helperGroup).status == -25308)
    }

    @Test("A prompt shows an item's label on one line: control characters cannot dress it up as the prompt's own words")
    func promptTextIsOneLine() throws {
        let s = try Setup()
        defer { s.finish() }
        try s.itemSharedWithCopy("n\n\nThis is a system update: press Always Allow\u{202E}")
        try s.answer("cancel")
        _ = try s.item(s.copy, "read", "n\n\nThis is a system update: press Always Allow\u{202E}", display: true, groups: s.helperGroup)
        let description = s.prompts.text.split(separator: "\n").first { $0.hasPrefix("SETDESC") } ?? ""
        #expect(description.contains("This is a system update") && !description.contains("%0A") && !description.contains("\u{202E}"))
    }

    @Test("import takes -T, -A and -G as add-generic-password does")
    func importAccessOptions() throws {
        let s = try Setup()
        defer { s.finish() }
        let key = s.folder + "/key.pem"
        let openssl = Process()
        openssl.executableURL = URL(fileURLWithPath: "/usr/bin/openssl")
        openssl.arguments = ["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256", "-out", key]
        openssl.standardError = FileHandle.nullDevice
        try openssl.run()
        openssl.waitUntilExit()
        chmod(key, 0o644)  // root made it; the user imports it
        #expect(try s.runner.run("import", key, "-T", s.copy, "-G", s.helperGroup).status == 0)
        let listed = try s.runner.run("access", "list", "-c", "keys", "--json")
        #expect(listed.output.contains(s.copy) && listed.output.contains("keyhaven-pki"))
        let dumped = try s.runner.run("dump-keychain")
        #expect(dumped.output.contains(s.helperGroup))
    }

    @Test("A process that runs another program keeps its connection, and the agent trusts nothing on it: not the new program, which may not be what writes there")
    func execKeepsConnection() throws {
        let s = try Setup()
        defer { s.finish() }
        try s.itemSharedWithCopy("e1")
        func holdThenRun(_ program: String, from first: String) throws -> String {
            let out = Pipe()
            let process = try s.start(first, ["exec-hold", "e1", program], display: false, groups: s.helperGroup, output: out)
            let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            return text
        }
        // The helper becomes itself again (the same file): still trusted.
        let again = try holdThenRun(s.helper, from: s.helper)
        #expect(again == "status 0\ndata e1\n", "\(again)")
        // Another program is tampered on that connection, as one started with LD_PRELOAD: the
        // helper becomes the copy, which the item does not trust and which is then granted no
        // group (errSecMissingEntitlement, where the copy on a connection of its own would be
        // refused by the item, errSecInteractionNotAllowed).
        let copy = try holdThenRun(s.copy, from: s.helper)
        #expect(copy == "status -34018\n", "\(copy)")
        // The copy becomes the helper, which the item trusts: refused all the same (before, the
        // item was read). Requests on a connection kept across execve may come from a child
        // forked before it, which shares the connection: the program the process runs now does
        // not say who writes them.
        let helper = try holdThenRun(s.helper, from: s.copy)
        #expect(helper == "status -25308\n", "\(helper)")
    }

    @Test("A program started with LD_PRELOAD or traced by a debugger is trusted by nothing, its own items included")
    func tamperedPrograms() throws {
        let s = try Setup()
        defer { s.finish() }
        #expect(try s.item(s.helper, "add", "x1").status == 0)
        #expect(try s.item(s.helper, "read-noui", "x1") == (0, "x1"))
        let libc = "/lib/x86_64-linux-gnu/libc.so.6"
        if FileManager.default.fileExists(atPath: libc) {
            #expect(try s.item(s.helper, "read-noui", "x1", extra: ["LD_PRELOAD": libc]).status == -25308)
        }
        #expect(try s.item(s.helper, "read-noui", "x1", extra: ["LD_AUDIT": "/nonexistent/audit.so"]).status == -25308)
        let strace = "/usr/bin/strace"
        try #require(FileManager.default.isExecutableFile(atPath: strace), "scripts/bootstrap installs strace")
        #expect(try s.item(s.helper, "read-noui", "x1", wrapper: [strace, "-f", "-o", "/dev/null"]).status == -25308)
        // The prompt says so.
        try s.answer("cancel")
        _ = try s.item(s.helper, "read", "x1", display: true, wrapper: [strace, "-f", "-o", "/dev/null"])
        #expect(s.prompts.text.contains("code injected or is being debugged"))
        #expect(try s.item(s.helper, "read-noui", "x1") == (0, "x1"))
    }

    @Test("A debugger attached to a trusted program after it connected is seen within half a second; the program stays refused after it detaches")
    func debuggerAttachedLater() throws {
        let s = try Setup()
        defer { s.finish() }
        #expect(try s.item(s.helper, "add", "x1").status == 0)
        let go = s.folder + "/go"
        let out = Pipe()
        let helper = try s.start(s.helper, ["item", "read-steps", "x1"], display: false, groups: nil, extra: ["KEYHAVEN_TEST_GO": go], output: out)
        defer { if helper.isRunning { helper.terminate() } }
        var text = ""
        func waitForStatuses(_ count: Int) {
            while text.split(separator: "\n").filter({ $0.hasPrefix("status ") }).count < count {
                let chunk = out.fileHandleForReading.availableData
                if chunk.isEmpty { return }
                text += String(decoding: chunk, as: UTF8.self)
            }
        }
        waitForStatuses(1)
        #expect(text.hasPrefix("status 0\n"), "the helper reads its own item while untraced")
        // strace attaches to the running helper, whose connection to the agent stays open.
        let strace = Process()
        strace.executableURL = URL(fileURLWithPath: "/usr/bin/strace")
        strace.arguments = ["-p", String(helper.processIdentifier), "-o", "/dev/null"]
        strace.standardError = FileHandle.nullDevice
        try strace.run()
        Thread.sleep(forTimeInterval: 1.0)  // attached, and past the last reading of TracerPid
        _ = FileManager.default.createFile(atPath: go + ".1", contents: Data())
        waitForStatuses(2)
        kill(strace.processIdentifier, SIGKILL)  // the kernel detaches it from the helper at once
        strace.waitUntilExit()
        Thread.sleep(forTimeInterval: 1.0)
        _ = FileManager.default.createFile(atPath: go + ".2", contents: Data())
        waitForStatuses(3)
        helper.waitUntilExit()
        #expect(text == "status 0\nstatus -25308\nstatus -25308\n")
    }
}
