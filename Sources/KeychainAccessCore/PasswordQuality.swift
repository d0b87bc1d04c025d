#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CPWQuality

/// New Password Item's strength meter and generator: libpwquality, as GNOME's own password
/// dialogs use it, with the system's settings (`/etc/security/pwquality.conf`).
package enum PasswordQuality {
    /// How strong a password is, as the meter shows it.
    package struct Rating: Sendable, Equatable {
        /// 0 (refused or empty) to 100.
        package let score: Int
        /// "Weak", "Fair", "Good" or "Strong".
        package let level: String
        /// Why libpwquality refused it (too short, a dictionary word, ...); nil when it passed.
        package let reason: String?
    }

    /// Rates `password` (its bytes, never a Swift string, so that the caller can wipe them).
    package static func rate(_ password: [UInt8]) -> Rating {
        guard !password.isEmpty else { return Rating(score: 0, level: "Weak", reason: "The password is empty.") }
        guard let settings = pwquality_default_settings() else { return Rating(score: 0, level: "Weak", reason: "libpwquality is not usable.") }
        defer { pwquality_free_settings(settings) }
        _ = pwquality_read_config(settings, nil, nil)
        var text = password + [0]
        defer { for index in text.indices { text[index] = 0 } }
        var auxiliary: UnsafeMutableRawPointer?
        let score = text.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) { pwquality_check(settings, $0, nil, nil, &auxiliary) }
        }
        guard score >= 0 else {
            var message = [CChar](repeating: 0, count: 256)
            let reason = pwquality_strerror(&message, message.count, score, auxiliary).map { String(cString: $0) } ?? "refused"
            return Rating(score: 0, level: "Weak", reason: reason.prefix(1).uppercased() + reason.dropFirst() + ".")
        }
        let level = score < 40 ? "Fair" : score < 80 ? "Good" : "Strong"
        return Rating(score: Int(score), level: level, reason: nil)
    }

    /// A new random password of `entropyBits` bits of the system's randomness, in
    /// libpwquality's pronounceable-free alphabet; its bytes, for the caller to wipe.
    package static func generate(entropyBits: Int32 = 96) -> [UInt8]? {
        guard let settings = pwquality_default_settings() else { return nil }
        defer { pwquality_free_settings(settings) }
        _ = pwquality_read_config(settings, nil, nil)
        var generated: UnsafeMutablePointer<CChar>?
        guard pwquality_generate(settings, entropyBits, &generated) == 0, let generated else { return nil }
        let count = strlen(generated)
        let bytes = Array(UnsafeRawBufferPointer(start: generated, count: count))
        memset(generated, 0, count)
        free(generated)
        return bytes
    }
}
