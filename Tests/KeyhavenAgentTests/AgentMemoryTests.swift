import Foundation
import KeychainTestSupport
import Testing

/// The agent's memory (the security review's medium finding): after `lock-keychain -a`, nothing of
/// the keychain password or of a secret it served is left for a memory scan to find, and the
/// user's other processes cannot read its memory at all. The agent runs as a second user so that
/// "not dumpable" shows (its `/proc` files then belong to root); the scan is root's.
@Suite("The agent's memory", .freshKeychain(), .serialized, .enabled(if: LocalUser.isAvailable, LocalUser.skipReason))
struct AgentMemoryTests {
    @Test("After lock-keychain -a, a scan of the agent's memory finds neither the password nor the secret")
    func nothingLeftAfterLock() throws {
        let session = try UserKeychainSession(try LocalUser.make("keyhaven-victim"))
        defer { session.remove() }
        let password = "pw-" + Self.randomText(29)
        let secret = "secret-" + Self.randomText(41)
        #expect(try session.keyhaven("create-keychain", "-p", password, "vault").status == 0)
        #expect(try session.keyhaven("add-generic-password", "-a", "memory", "-s", "scan", "-w", secret, "vault").status == 0)
        #expect(try session.keyhaven("find-generic-password", "-a", "memory", "-w", "vault").output == secret + "\n")
        #expect(try session.keyhaven("set-keychain-password", "-o", password, "-p", password + "2", "vault").status == 0)
        #expect(try session.keyhaven("lock-keychain", "-a").status == 0)

        let pid = try #require(Self.agentProcess(of: session.user))
        // Not dumpable: its /proc files belong to root, not to the user it runs as; no core file.
        var info = stat()
        #expect(stat("/proc/\(pid)/mem", &info) == 0 && info.st_uid == 0, "the agent is dumpable")
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        #expect(limits.split(separator: "\n").contains { $0.hasPrefix("Max core file size") && $0.split(separator: " ").dropFirst(4).prefix(2) == ["0", "0"] },
                "\(limits)")

        let memory = try Self.readMemory(of: pid)
        #expect(memory.count > 1 << 20, "the scan read too little to mean anything")
        for (name, text) in [("password", password), ("new password", password + "2"), ("secret", secret)] {
            let found = Self.occurrences(of: Array(text.utf8), in: memory)
            #expect(found == 0, "\(found) copies of the \(name) in the agent's memory after lock")
        }
        // The scan finds what is there: the service name of the item stays in memory (the
        // search's recent keyed hashes remember attribute values), a check that it looks at all.
        #expect(Self.occurrences(of: Array("memory".utf8), in: memory) > 0)
    }

    static func randomText(_ count: Int) -> String {
        String((0..<count).map { _ in "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".randomElement()! })
    }

    /// The pid of the `keyhavend` that runs as `user`.
    static func agentProcess(of user: LocalUser) -> Int32? {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        for entry in entries {
            guard let pid = Int32(entry),
                  let status = try? String(contentsOfFile: "/proc/\(entry)/status", encoding: .utf8),
                  status.contains("Name:\tkeyhavend\n"),
                  status.split(separator: "\n").contains(where: { $0.hasPrefix("Uid:\t\(user.uid)\t") }) else { continue }
            return pid
        }
        return nil
    }

    /// Every readable mapping of the process, concatenated (as root: /proc/PID/mem).
    static func readMemory(of pid: Int32) throws -> [UInt8] {
        // Read to the end: /proc files report a size of zero.
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/\(pid)/maps"))
        defer { try? handle.close() }
        let maps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        let fd = open("/proc/\(pid)/mem", O_RDONLY)
        guard fd >= 0 else { throw CocoaError(.fileReadNoPermission) }
        defer { close(fd) }
        var memory: [UInt8] = []
        for line in maps.split(separator: "\n") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, fields[1].hasPrefix("r"), !line.hasSuffix("[vvar]"), !line.hasSuffix("[vsyscall]") else { continue }
            let range = fields[0].split(separator: "-").compactMap { UInt64($0, radix: 16) }
            guard range.count == 2 else { continue }
            var chunk = [UInt8](repeating: 0, count: Int(range[1] - range[0]))
            let n = chunk.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, off_t(range[0])) }
            if n > 0 { memory.append(contentsOf: chunk.prefix(n)) }
        }
        return memory
    }

    static func occurrences(of needle: [UInt8], in haystack: [UInt8]) -> Int {
        guard let first = needle.first, needle.count <= haystack.count else { return 0 }
        var count = 0
        haystack.withUnsafeBufferPointer { hay in
            var i = 0
            while i <= hay.count - needle.count {
                if hay[i] == first, memcmp(hay.baseAddress! + i, needle, needle.count) == 0 { count += 1 }
                i += 1
            }
        }
        return count
    }
}
