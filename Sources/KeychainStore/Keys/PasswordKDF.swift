import Crypto
import Dispatch
import FoundationEssentials
import Synchronization

/// The memory-hard function that turns a keychain password into the password key: scrypt, from
/// the system's OpenSSL (`Scrypt`).
///
/// The parameters live in the keychain file (so they can be raised later) and are calibrated when
/// a password is set, to take about a second on the machine that sets it (a quarter of a second in
/// debug builds), never below the floor (N = 2^17, r = 8, p = 1: 128 MiB, OWASP's minimum for
/// scrypt). Encoded as `"scrypt" || u8 log2(N) || u32 r || u32 p || 16-byte salt`.
///
/// A file is untrusted input: parameters that would take more than ``maximumMemory`` (a crafted
/// header asking for N = 2^30 would exhaust memory on unlock) are refused as a damaged keychain.
package struct PasswordKDF: Sendable, Equatable {
    package var logN: UInt8
    package var r: UInt32
    package var p: UInt32
    package var salt: Data

    /// The least work any keychain password gets.
    package static let floorLogN: UInt8 = 17
    /// What calibration aims for.
    #if DEBUG
    package static let targetSeconds = 0.25
    #else
    package static let targetSeconds = 1.0
    #endif
    /// The most calibration chooses (1 GiB of memory at r = 8).
    package static let ceilingLogN: UInt8 = 20
    /// The most memory (128 * r * N bytes) and parallel work a file may ask for: the ceiling's.
    package static let maximumMemory = 1 << 30
    package static let maximumParallelism: UInt32 = 4

    /// Parameters tests may use to keep them fast. Only code inside this package can set it;
    /// release builds of the public API never do.
    nonisolated(unsafe) package static var testingLogN: UInt8?

    package init(logN: UInt8, r: UInt32 = 8, p: UInt32 = 1, salt: Data = KeychainCrypto.randomBytes(16)) {
        self.logN = logN
        self.r = r
        self.p = p
        self.salt = salt
    }

    /// Fresh parameters for a new password, calibrated on this machine.
    package static func calibrated() throws(StoreError) -> PasswordKDF {
        if let testingLogN { return PasswordKDF(logN: testingLogN) }
        var kdf = PasswordKDF(logN: floorLogN)
        var elapsed = try kdf.timeOneDerivation()
        // Each step doubles N and so the time; stop at the step closest to the target.
        while kdf.logN < ceilingLogN && elapsed * 1.5 < targetSeconds {
            kdf.logN += 1
            elapsed *= 2
        }
        return kdf
    }

    private func timeOneDerivation() throws(StoreError) -> Double {
        let clock = ContinuousClock()
        var failure: StoreError?
        let duration = clock.measure {
            do throws(StoreError) { _ = try deriveKey(from: [0x6B, 0x68]) } catch { failure = error }
        }
        if let failure { throw failure }
        return Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    /// At most this many keys are derived at once in a process. Each derivation takes up to
    /// ``maximumMemory``, and the agent answers each client on a thread of its own: 64 clients
    /// sending wrong passwords at once would otherwise ask for 64 times that.
    package static let concurrentDerivations = 4
    private static let derivations = DispatchSemaphore(value: concurrentDerivations)
    private static let deriving = Atomic<Int>(0)
    /// How many keys are being derived now.
    package static var derivingNow: Int { deriving.load(ordering: .relaxed) }

    /// The password key (waiting while ``concurrentDerivations`` others are being derived).
    package func deriveKey(from password: [UInt8]) throws(StoreError) -> SymmetricKey {
        Self.derivations.wait()
        Self.deriving.add(1, ordering: .relaxed)
        defer {
            Self.deriving.subtract(1, ordering: .relaxed)
            Self.derivations.signal()
        }
        guard var bytes = Scrypt.derive(password: password, salt: salt, logN: logN, r: r, p: p, count: 32) else {
            throw StoreError(.internalError, "scrypt failed (N = 2^\(logN), r = \(r), p = \(p))")
        }
        defer { zeroize(&bytes) }
        return SymmetricKey(data: bytes)
    }

    package var encoded: Data {
        var writer = ByteWriter()
        writer.raw("scrypt".utf8)
        writer.u8(logN)
        writer.u32(r)
        writer.u32(p)
        writer.raw(salt)
        return Data(writer.bytes)
    }

    package init(decoding data: Data) throws(StoreError) {
        var reader = ByteReader(Array(data))
        let name: [UInt8]
        do throws(CodecError) {
            name = Array(try reader.take(6))
            logN = try reader.u8()
            r = try reader.u32()
            p = try reader.u32()
            salt = try reader.takeData(16)
        } catch {
            throw StoreError(.invalidKeychain, "the keychain's password parameters are cut short")
        }
        guard name == Array("scrypt".utf8) else { throw StoreError(.invalidKeychain, "the keychain's password function is unknown") }
        guard reader.remaining == 0, logN >= 10, logN <= Self.ceilingLogN, r >= 1, r <= 64, p >= 1, p <= Self.maximumParallelism,
              128 * Int(r) << Int(logN) <= Self.maximumMemory else {
            throw StoreError(.invalidKeychain, "the keychain's password parameters are out of range")
        }
    }
}
