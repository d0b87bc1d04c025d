#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainModel

/// Passwords from the terminal (without echo) or standard input, never from the command line
/// unless the user put them there.
package enum PasswordInput {
    /// The sentinel the argument pre-processor puts where a password option had no value.
    static let prompt = "\u{0}prompt"

    /// The password an option gave: its value, a prompt, or standard input for `-`.
    package static func resolve(_ value: String?, prompt: String) throws(StoreError) -> [UInt8]? {
        switch value {
        case nil: return nil
        case Self.prompt?: return try read(prompt: prompt)
        case "-"?: return try readLine(fd: 0)
        case let value?: return Array(value.utf8)
        }
    }

    /// The password an option gave, or else one asked for.
    package static func resolveOrAsk(_ value: String?, prompt: String) throws(StoreError) -> [UInt8] {
        if let given = try resolve(value, prompt: prompt) { return given }
        return try read(prompt: prompt)
    }

    /// The password an option gave, or else one asked for; with no terminal and nothing on
    /// standard input (not even an empty line), an error that says `needed` needs it, rather than
    /// an empty password the keychain then refuses as wrong.
    package static func resolveOrAsk(_ value: String?, prompt: String, needed: String) throws(StoreError) -> [UInt8] {
        if let given = try resolve(value, prompt: prompt) { return given }
        guard let asked = try ask(prompt: prompt) else {
            throw StoreError(.interactionNotAllowed, "\(needed) needs the keychain's password: give it with -p, or on standard input "
                             + "(there is no terminal to ask on)")
        }
        return asked
    }

    /// Asks on the terminal without echo; reads standard input when there is no terminal.
    package static func read(prompt: String) throws(StoreError) -> [UInt8] {
        try ask(prompt: prompt) ?? []
    }

    /// ``read(prompt:)``, nil when there is no terminal and standard input holds no line at all.
    private static func ask(prompt: String) throws(StoreError) -> [UInt8]? {
        let tty = open("/dev/tty", O_RDWR | O_CLOEXEC)
        guard tty >= 0 else {
            var line: [UInt8] = []
            return try readLine(fd: 0, into: &line) ? line : nil
        }
        defer { close(tty) }
        var saved = termios()
        let isTerminal = tcgetattr(tty, &saved) == 0
        var quiet = saved
        quiet.c_lflag &= ~tcflag_t(ECHO)
        // Echo off before the prompt: TCSAFLUSH drops input already typed, so an answer typed
        // (or sent) right after the prompt appeared must not arrive before it.
        if isTerminal { tcsetattr(tty, TCSAFLUSH, &quiet) }
        _ = Array(prompt.utf8).withUnsafeBytes { write(tty, $0.baseAddress, $0.count) }
        defer {
            if isTerminal { tcsetattr(tty, TCSAFLUSH, &saved) }
            _ = write(tty, "\n", 1)
        }
        return try readLine(fd: tty)
    }

    private static func readLine(fd: Int32) throws(StoreError) -> [UInt8] {
        var line: [UInt8] = []
        _ = try readLine(fd: fd, into: &line)
        return line
    }

    /// Reads one line into `line`; false when the input ended before any byte (no line at all).
    private static func readLine(fd: Int32, into line: inout [UInt8]) throws(StoreError) -> Bool {
        var byte: UInt8 = 0
        var readAny = false
        while true {
            let n = System.read(fd, &byte, 1)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            readAny = true
            if byte == 0x0A { break }
            line.append(byte)
            guard line.count <= 1 << 20 else { zeroize(&line); throw StoreError(.dataTooLarge, "the password is too long") }
        }
        if line.last == 0x0D { line.removeLast() }
        return readAny
    }
}
