import Foundation
import KeychainServices
import KeychainServicesExtras
import KeychainStore
import KeychainTestSupport
import Testing

/// Several processes on one keychain file at once (the helper is `keyhaven-test-helper`).
@Suite(.freshKeychain(accessGroups: ["multi.process.group"]))
struct MultiProcessTests {
    static var helper: URL { HelperProcess.executable }

    static func start(_ arguments: [String], environment changes: [String: String?] = [:]) throws -> (Process, Pipe) {
        try HelperProcess.start(arguments, environment: changes)
    }

    static func finish(_ started: (Process, Pipe)) -> (Int32, String) { HelperProcess.finish(started) }

    @Test("Four processes write at once; every write is there afterwards, read by this process and another")
    func concurrentWriters() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.helper.path), "build the helper: swift build")
        // Create the keychain first, so the processes race on writes, not on creation.
        #expect(add(genericPassword("seed")) == errSecSuccess)
        let jobs = try [["add", "p1", "60"], ["add", "p2", "60"], ["churn", "c1", "30"], ["churn", "c2", "30"]].map { try Self.start($0) }
        let results = jobs.map(Self.finish)
        #expect(results.map(\.0) == [0, 0, 0, 0])
        #expect(results.map(\.1) == ["ok 60", "ok 60", "ok 30", "ok 30"])
        for prefix in ["p1", "p2"] {
            for i in 0..<60 {
                #expect(secret([K.class: kSecClassGenericPassword, K.service: "multi", K.account: "\(prefix)-\(i)"]) == Data("\(prefix)-\(i)"))
            }
            #expect(Self.finish(try Self.start(["read", prefix, "60"])).1 == "ok 60")
        }
        #expect(copy([K.class: kSecClassGenericPassword, K.account: "c1-0"]).0 == errSecItemNotFound)
    }

    @Test("Two processes creating the same new keychain at once end with one keychain both can use")
    func concurrentCreation() throws {
        let jobs = try [["add", "x", "5"], ["add", "y", "5"], ["add", "z", "5"]].map { try Self.start($0) }
        let results = jobs.map(Self.finish)
        #expect(results.map(\.0) == [0, 0, 0])
        for prefix in ["x", "y", "z"] {
            #expect(secret([K.class: kSecClassGenericPassword, K.service: "multi", K.account: "\(prefix)-4"]) == Data("\(prefix)-4"))
        }
    }

    @Test("A process sees what another process wrote after it opened the keychain")
    func seesOtherProcessWrites() throws {
        #expect(add(genericPassword("mine")) == errSecSuccess)
        #expect(Self.finish(try Self.start(["add", "late", "3"])).0 == 0)
        #expect(secret([K.class: kSecClassGenericPassword, K.service: "multi", K.account: "late-2"]) == Data("late-2"))
    }
}

/// Faults and configuration that need a process of their own.
@Suite(.freshKeychain(accessGroups: ["multi.process.group"]))
struct ProcessFaultTests {
    /// Parses the helper's "added N status S verified V".
    static func fillReport(_ output: String) throws -> (added: Int, status: OSStatus, verified: Int) {
        let parts = output.split(separator: " ")
        try #require(parts.count == 6 && parts[0] == "added", "unexpected helper output: \(output)")
        return (try #require(Int(parts[1])), try #require(OSStatus(parts[3])), try #require(Int(parts[5])))
    }

    @Test("A file-size limit mid-write fails the add; acknowledged items survive and the file stays sound")
    func fileSizeLimit() throws {
        let (exit, output) = MultiProcessTests.finish(try MultiProcessTests.start(["fill", "f", "200"]))
        #expect(exit == 0)
        let report = try Self.fillReport(output)
        // EFBIG (the limit) is an I/O error to SQLite; ENOSPC (a full disk, next test) is SQLITE_FULL.
        #expect([errSecDiskFull, errSecIO].contains(report.status))
        #expect(report.added < 200)
        #expect(report.verified == report.added)
        for i in 0..<report.added {
            #expect(secret([K.class: kSecClassGenericPassword, K.service: "multi", K.account: "f-\(i)"])
                    == Data(repeating: UInt8(i % 256), count: 64 * 1024))
        }
        #expect(copy([K.class: kSecClassGenericPassword, K.service: "multi", K.account: "f-\(report.added)"]).0 == errSecItemNotFound)
        #expect(try KeychainRegistry.shared.defaultKeychain().integrityCheck() == "ok")
        #expect(add(genericPassword("after the fault")) == errSecSuccess)
    }

    /// Whether this machine lets an unprivileged process mount a file system of its own.
    static let canMountPrivately: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare") else { return false }
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        probe.arguments = ["-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /tmp 2>/dev/null"]
        guard (try? probe.run()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }()

    /// Runs a shell script in a private user and mount namespace, with `$0` = `folder` and
    /// `$1` = the helper; returns its exit status and output.
    static func inPrivateMountNamespace(_ script: String, _ folder: String) throws -> (Int32, String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unshare")
        process.arguments = ["-rm", "sh", "-c", script, folder, MultiProcessTests.helper.path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    @Test("A full disk (ENOSPC on a 768 KiB tmpfs) is errSecDiskFull and loses nothing acknowledged",
          .enabled(if: canMountPrivately, "needs unshare -rm (user and mount namespaces)"))
    func diskFull() throws {
        let folder = try TemporaryFolder.make(prefix: "keyhaven-full")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (exit, output) = try Self.inPrivateMountNamespace(
            "mount -t tmpfs -o size=768k tmpfs \"$0\" && KEYHAVEN_HOME=\"$0\" \"$1\" fillfs f 200", folder)
        #expect(exit == 0)
        let report = try Self.fillReport(output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(report.status == errSecDiskFull)
        #expect(report.added > 0 && report.added < 200)
        #expect(report.verified == report.added)
    }

    @Test("On a read-only file system an add is errSecReadOnly, and reading still works",
          .enabled(if: canMountPrivately, "needs unshare -rm (user and mount namespaces)"))
    func readOnlyFileSystem() throws {
        #expect(MultiProcessTests.finish(try MultiProcessTests.start(["add", "a", "3"])).1 == "ok 3")
        let (_, output) = try Self.inPrivateMountNamespace(
            "mount --bind \"$0\" \"$0\" && mount -o remount,ro,bind \"$0\" && "
                + "KEYHAVEN_HOME=\"$0\" \"$1\" add b 1; KEYHAVEN_HOME=\"$0\" \"$1\" read a 3",
            TestHome.current!.path)
        #expect(output == "error add b-0 \(errSecReadOnly)\nok 3\n")
        #expect(copy([K.class: kSecClassGenericPassword, K.account: "b-0"]).0 == errSecItemNotFound)
    }

    @Test("KEYHAVEN_ACCESS_GROUPS sets a process's groups; without it, its application group (its name and a digest of its path)")
    func accessGroupsFromEnvironment() throws {
        let configured = MultiProcessTests.finish(try MultiProcessTests.start(
            ["groups", "-", "0"], environment: ["KEYHAVEN_ACCESS_GROUPS": "TEAM.app.one, TEAM.shared,,"]))
        #expect(configured.1 == "TEAM.app.one,TEAM.shared")
        let plain = MultiProcessTests.finish(try MultiProcessTests.start(["groups", "-", "0"],
                                                                        environment: ["KEYHAVEN_ACCESS_GROUPS": nil]))
        #expect(plain.1 == ApplicationIdentityReader.applicationGroup(path: HelperProcess.executable.resolvingSymlinksInPath().path))
        #expect(plain.1.hasPrefix("keyhaven-test-helper.") && plain.1.count == "keyhaven-test-helper.".count + 16)
    }
}
