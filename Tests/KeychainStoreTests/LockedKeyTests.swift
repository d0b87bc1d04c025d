import Crypto
import Foundation
@testable import KeychainStore
import Testing

/// Key material in memory: locked pages, left out of core dumps and forks, zeroed when dropped.
struct LockedKeyTests {
    /// The `VmFlags` of the mapping of this process that holds `address`.
    static func flags(at address: UInt) throws -> [Substring] {
        // Read to the end: /proc files report a size of zero.
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: "/proc/self/smaps"))
        defer { try? handle.close() }
        let smaps = String(decoding: try handle.readToEnd() ?? Data(), as: UTF8.self)
        var inside = false
        for line in smaps.split(separator: "\n") {
            if let dash = line.firstIndex(of: "-"), let space = line.firstIndex(of: " "), dash < space,
               let start = UInt(line[..<dash], radix: 16), let end = UInt(line[line.index(after: dash)..<space], radix: 16) {
                inside = (start..<end).contains(address)
            } else if inside, line.hasPrefix("VmFlags:") {
                return line.split(separator: " ").dropFirst().map { $0 }
            }
        }
        throw CocoaError(.fileReadNoSuchFile)
    }

    @Test("A class key's pages are locked (where the memory-lock limit allows), excluded from dumps and forks, and zeroed when dropped")
    func lockedPages() throws {
        let value = SymmetricKey(size: .bits256)
        var key: LockedKey? = LockedKey(value)
        let address = key!.address
        #expect(key!.key == value)
        let flags = try Self.flags(at: address)
        #expect(flags.contains("dd"), "not excluded from core dumps: \(flags)")
        #expect(flags.contains("wf"), "not wiped on fork: \(flags)")
        #expect(flags.contains("lo") == LockedKeyArena.shared.isLocked, "\(flags)")
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(8), &limit)  // RLIMIT_MEMLOCK (not exported by the Glibc module)
        if limit.rlim_cur >= 1 << 16 { #expect(LockedKeyArena.shared.isLocked, "the memory-lock limit allows it, yet the page is not locked") }
        key = nil
        // The slot stays mapped (slots are reused): its bytes are zero now.
        let bytes = UnsafeRawBufferPointer(start: UnsafeRawPointer(bitPattern: address), count: 32)
        #expect(bytes.allSatisfy { $0 == 0 })
    }

    @Test("An open keychain's class keys and index key are in locked memory")
    func keychainKeysAreLocked() throws {
        let keys = UnlockedKeys(Keybag.freshKeys(hasPassword: false), hasPassword: false)
        let classKeys = try keys.keys(for: .whenUnlocked)
        #expect(classKeys.isSame(as: ClassKeys(classKey: classKeys.classKey)))
        #expect(!classKeys.isSame(as: ClassKeys(classKey: SymmetricKey(size: .bits256))))
        #expect(keys.index != nil)
    }
}
