/// A keychain's locking settings (macOS's `SecKeychainSettings`), stored in its header.
///
/// Encoded as `u8 version (1), u8 lockOnSleep, u8 useLockInterval, u32 lockInterval`.
package struct LockSettings: Sendable, Equatable {
    /// Lock when the screen locks or the system sleeps (the agent follows logind; KeyhavenSession).
    package var lockOnSleep = false
    /// Lock after `lockInterval` seconds without a call.
    package var useLockInterval = false
    package var lockInterval: UInt32 = 300

    package init(lockOnSleep: Bool = false, useLockInterval: Bool = false, lockInterval: UInt32 = 300) {
        self.lockOnSleep = lockOnSleep
        self.useLockInterval = useLockInterval
        self.lockInterval = lockInterval
    }

    package var encoded: [UInt8] {
        var writer = ByteWriter()
        writer.u8(1)
        writer.u8(lockOnSleep ? 1 : 0)
        writer.u8(useLockInterval ? 1 : 0)
        writer.u32(lockInterval)
        return writer.bytes
    }

    package init(decoding bytes: [UInt8]) throws(CodecError) {
        var reader = ByteReader(bytes)
        guard try reader.u8() == 1 else { throw CodecError(.malformed, "unknown lock settings version") }
        lockOnSleep = try reader.u8() != 0
        useLockInterval = try reader.u8() != 0
        lockInterval = try reader.u32()
    }
}
