import Foundation
import KeychainServices
import KeychainServicesExtras
import KeychainTestSupport
import Testing

/// Several processes on one keychain file at once (the helper is `keyhaven-test-helper`).
@Suite(.freshKeychain(accessGroups: ["multi.process.group"]))
struct MultiProcessTests {
    /// The build folder holding this test binary and the helper.
    static var helper: URL {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
            .appendingPathComponent("keyhaven-test-helper")
    }

    /// Starts the helper with `arguments` in the test's keychain home.
    static func start(_ arguments: [String]) throws -> (Process, Pipe) {
        let process = Process()
        process.executableURL = helper
        process.arguments = arguments
        var environment = ProcessInfo.processInfo.environment
        environment["KEYHAVEN_HOME"] = TestHome.current!.path
        process.environment = environment
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        return (process, output)
    }

    static func finish(_ started: (Process, Pipe)) -> (Int32, String) {
        let data = started.1.fileHandleForReading.readDataToEndOfFile()
        started.0.waitUntilExit()
        return (started.0.terminationStatus, String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    @Test("Four processes write at once; every write is there afterwards, read by this process and another")
    func concurrentWriters() throws {
        #expect(FileManager.default.isExecutableFile(atPath: Self.helper.path), "build the helper: swift build")
        // Create the keychain first, so the processes race on writes, not on creation.
        #expect(add(genericPassword("seed")) == errSecSuccess)
        let jobs = try [["add", "p1", "60"], ["add", "p2", "60"], ["churn", "c1", "30"], ["churn", "c2", "30"]].map(Self.start)
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
        let jobs = try [["add", "x", "5"], ["add", "y", "5"], ["add", "z", "5"]].map(Self.start)
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
