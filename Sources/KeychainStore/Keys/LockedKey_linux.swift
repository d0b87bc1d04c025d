#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Crypto
import Synchronization

/// A 256-bit key kept in memory that is locked (`mlock`: never written to swap), left out of core
/// dumps (`MADV_DONTDUMP`) and of a forked child (`MADV_WIPEONFORK`), and zeroed when the key is
/// dropped. The keys a keychain holds while open (class keys, the keys derived from them, the
/// index key) live here; a crypto call gets a short-lived `SymmetricKey` copy, which swift-crypto
/// zeroes when it is freed.
///
/// Locking is best effort: where the memory-lock limit (`RLIMIT_MEMLOCK`) is spent, the pages are
/// still excluded from dumps and zeroed, and ``LockedKeyArena/isLocked`` says so.
package final class LockedKey: Sendable {
    private let slot: LockedKeyArena.Slot

    /// Copies `key` (256 bits, as every keychain key is) into locked memory.
    package init(_ key: SymmetricKey) {
        slot = LockedKeyArena.shared.allocate()
        key.withUnsafeBytes { source in
            slot.pointer.copyMemory(from: source.baseAddress!, byteCount: min(source.count, LockedKeyArena.slotSize))
        }
    }

    deinit { LockedKeyArena.shared.release(slot) }

    /// A copy for one crypto call (freed, and so zeroed, when the caller is done with it).
    package var key: SymmetricKey {
        SymmetricKey(data: UnsafeRawBufferPointer(start: slot.pointer, count: LockedKeyArena.slotSize))
    }

    /// Where the key's bytes are (for the test that checks the pages).
    package var address: UInt { UInt(bitPattern: slot.pointer) }

    /// Whether two hold the same key (swift-crypto's constant-time comparison).
    package func isSame(as other: LockedKey) -> Bool { key == other.key }
}

/// Pages of 32-byte slots for ``LockedKey``: mapped privately, locked, excluded from dumps.
package final class LockedKeyArena: Sendable {
    package static let shared = LockedKeyArena()
    static let slotSize = 32
    /// Slots per mapping: one page's worth.
    private static let pageSize = Int(sysconf(Int32(_SC_PAGESIZE)))

    struct Slot: @unchecked Sendable {
        // @unchecked: a slot is owned by one LockedKey, which only reads it after init.
        let pointer: UnsafeMutableRawPointer
    }

    private struct State {
        var free: [UnsafeMutableRawPointer] = []
        var locked = true
    }
    private let state = Mutex(State())

    /// Whether every page so far could be locked in memory.
    package var isLocked: Bool { state.withLock { $0.locked } }

    func allocate() -> Slot {
        state.withLock { state in
            if state.free.isEmpty { state.locked = Self.mapPage(into: &state.free) && state.locked }
            return Slot(pointer: state.free.removeLast())
        }
    }

    func release(_ slot: Slot) {
        explicit_bzero(slot.pointer, Self.slotSize)
        state.withLock { $0.free.append(slot.pointer) }
    }

    /// Maps one more page of slots (a mapping is never unmapped: the slots are reused). Returns
    /// whether the page is locked.
    /// Where no page can be mapped (memory exhausted), the slots come from the heap, unlocked and
    /// not excluded from dumps but still zeroed when dropped: a key is never refused a place.
    private static func mapPage(into free: inout [UnsafeMutableRawPointer]) -> Bool {
        guard let page = mmap(nil, pageSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0), page != MAP_FAILED else {
            let heap = UnsafeMutableRawPointer.allocate(byteCount: pageSize, alignment: slotSize)
            for offset in stride(from: 0, to: pageSize, by: slotSize) { free.append(heap + offset) }
            return false
        }
        _ = madvise(page, pageSize, 16)  // MADV_DONTDUMP
        _ = madvise(page, pageSize, 18)  // MADV_WIPEONFORK
        let locked = mlock(page, pageSize) == 0
        for offset in stride(from: 0, to: pageSize, by: slotSize) { free.append(page + offset) }
        return locked
    }
}
