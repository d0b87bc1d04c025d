#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Foundation
import KeychainModel
import KeyhavenCLI

/// keyhaven-pki as `ssh-add`'s askpass, for `keyhaven ssh import` (``variable`` set): a
/// passphrase prompt names the key's file, whose passphrase gnome-keyring keeps under the
/// attribute `unique` = `ssh-store:FILE`; it is printed for ssh-add alone (askpass's standard
/// output is ssh-add's pipe). Without it, the user is asked on the terminal; without a terminal,
/// or after a wrong passphrase, it gives up (status 1), so that ssh-add stops asking.
package enum SSHAskpass {
    /// Set in ssh-add's environment by the import: this run is its askpass.
    package static let variable = "KEYHAVEN_SSH_ASKPASS"

    /// This program's own path, for `SSH_ASKPASS`.
    static var executable: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    }

    /// Answers `prompt`; the process's exit status.
    package static func answer(_ prompt: String) -> Int32 {
        // "Enter passphrase for FILE: " or "Enter passphrase for FILE (will confirm each use): ".
        let prefix = "Enter passphrase for "
        guard prompt.hasPrefix(prefix) else { return 1 }  // "Bad passphrase, try again for ...": give up
        var file = String(prompt.dropFirst(prefix.count))
        if let end = file.range(of: " (will confirm", options: .backwards) ?? file.range(of: ": ", options: .backwards) {
            file = String(file[..<end.lowerBound])
        }
        var passphrase: [UInt8]
        if let stored = try? SecretServiceReader().lookup(["unique": "ssh-store:" + file]) {
            passphrase = Array(stored)
        } else {
            let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
            guard tty >= 0 else { return 1 }
            close(tty)
            guard let typed = try? PasswordInput.read(prompt: prompt) else { return 1 }
            passphrase = typed
        }
        defer { zeroize(&passphrase) }
        passphrase.append(UInt8(ascii: "\n"))
        let written = passphrase.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        return written == passphrase.count ? 0 : 1
    }
}
