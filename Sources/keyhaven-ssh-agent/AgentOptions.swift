/// `keyhaven-ssh-agent`'s command line: OpenSSH ssh-agent's, so that shell start-up files,
/// systemd units and OpenSSH's own tests drive it unchanged (ssh-agent(1)).
struct AgentOptions: Sendable, Equatable {
    enum Syntax: Sendable, Equatable { case bourne, cShell }

    /// `-c` or `-s`; else from `$SHELL` (a name ending in "csh" is the C shell).
    var syntax: Syntax?
    /// `-d`: in the foreground, with a line on standard error for each connection.
    var debug = false
    /// `-D`: in the foreground, quietly.
    var foreground = false
    /// `-k`: stop the agent `$SSH_AGENT_PID` names.
    var kill = false
    /// `-a`: the socket's path (else a new folder under /tmp).
    var socketPath: String?
    /// `-t`: the lifetime of a key added without one, in seconds.
    var defaultLifetime: UInt32?
    /// `-E`: the fingerprint hash the log uses.
    var fingerprintHash = "sha256"
    /// `--keychain` (Keyhaven's own): keys added without a lifetime are kept in the default
    /// keychain, and its SSH keys are offered, across restarts of the agent (docs/ssh.md).
    var keychain = false
    /// `--approval-minutes N` (Keyhaven's own): how long a confirming key's prompt may approve a
    /// host or an SSHSIG namespace for; 0 offers no such approval.
    var approvalMinutes: UInt32 = 10
    /// The command the agent runs, with the agent's variables set, and lives as long as.
    var command: [String] = []

    static let usage = """
        usage: keyhaven-ssh-agent [-c | -s] [-Dd] [-a bind_address] [-E fingerprint_hash] [-O option]
                                  [-P allowed_providers] [-t life] [--keychain]
                                  [--approval-minutes minutes]
               keyhaven-ssh-agent [-a bind_address] [-E fingerprint_hash] [-O option] [-P allowed_providers]
                                  [-t life] [--keychain] [--approval-minutes minutes] command [arg ...]
               keyhaven-ssh-agent [-c | -s] -k
        """

    struct UsageError: Error, Sendable, Equatable {
        /// What was wrong, said before the usage (empty: the usage alone).
        let message: String
    }

    /// Reads the arguments (without the program's name) as getopt(3) does: flags may be joined
    /// (`-sd`), an option's value may follow it at once (`-t60`) or as the next argument, `--`
    /// ends the options, and the first argument that is not an option starts the command.
    init(arguments: [String]) throws(UsageError) {
        var index = 0
        parsing: while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                index += 1
                break
            }
            if argument == "--keychain" {
                keychain = true
                index += 1
                continue parsing
            }
            if argument == "--approval-minutes" || argument.hasPrefix("--approval-minutes=") {
                let value = argument.hasPrefix("--approval-minutes=") ? String(argument.dropFirst("--approval-minutes=".count))
                    : index + 1 < arguments.count ? arguments[index + 1] : nil
                guard let value, let minutes = UInt32(value), minutes <= 1440 else {
                    throw UsageError(message: "--approval-minutes takes a number of minutes from 0 to 1440")
                }
                approvalMinutes = minutes
                index += argument.hasPrefix("--approval-minutes=") ? 1 : 2
                continue parsing
            }
            guard argument.hasPrefix("-"), argument.count > 1 else { break }
            var letters = Substring(argument.dropFirst())
            while let letter = letters.first {
                letters = letters.dropFirst()
                switch letter {
                case "c", "s":
                    guard syntax == nil else { throw UsageError(message: "") }
                    syntax = letter == "c" ? .cShell : .bourne
                case "d", "D":
                    guard !debug && !foreground else { throw UsageError(message: "") }
                    if letter == "d" { debug = true } else { foreground = true }
                case "k":
                    kill = true
                case "a", "E", "O", "P", "t":
                    let value: String
                    if !letters.isEmpty {
                        value = String(letters)
                        letters = ""
                    } else {
                        index += 1
                        guard index < arguments.count else { throw UsageError(message: "option requires an argument -- \(letter)") }
                        value = arguments[index]
                    }
                    try take(letter, value)
                default:
                    throw UsageError(message: "invalid option -- \(letter)")
                }
            }
            index += 1
            continue parsing
        }
        command = Array(arguments[index...])
        if kill && (!command.isEmpty || debug || foreground) { throw UsageError(message: "") }
        if !command.isEmpty && (syntax != nil || debug || foreground) { throw UsageError(message: "") }
    }

    private mutating func take(_ letter: Character, _ value: String) throws(UsageError) {
        switch letter {
        case "a": socketPath = value
        case "E":
            guard ["sha256", "md5"].contains(value.lowercased()) else { throw UsageError(message: "Invalid hash algorithm \"\(value)\"") }
            fingerprintHash = value.lowercased()
        case "O":
            // OpenSSH's options are about PKCS#11 and FIDO providers, which this agent never
            // loads: they are accepted and change nothing.
            guard value == "no-restrict-websafe" || value == "allow-remote-pkcs11" || value.hasPrefix("websafe-allow=") else {
                throw UsageError(message: "Unknown -O option")
            }
        case "P":
            break  // the providers allowed to load: this agent loads none
        default:
            guard let seconds = Self.seconds(value), seconds > 0 else { throw UsageError(message: "Invalid lifetime") }
            defaultLifetime = seconds
        }
    }

    /// A time as sshd_config(5) writes it: a number with an optional unit (s, m, h, d, w), the
    /// parts added ("1h30m"); nil when malformed or too long.
    static func seconds(_ text: String) -> UInt32? {
        guard !text.isEmpty else { return nil }
        var total: UInt64 = 0
        var digits = ""
        for character in text.lowercased() {
            if character.isASCII, character.isNumber {
                digits.append(character)
                continue
            }
            let unit: UInt64
            switch character {
            case "s": unit = 1
            case "m": unit = 60
            case "h": unit = 3600
            case "d": unit = 86400
            case "w": unit = 604_800
            default: return nil
            }
            guard let number = UInt64(digits), number <= UInt64(UInt32.max) else { return nil }
            total += number * unit
            digits = ""
            guard total <= UInt64(UInt32.max) else { return nil }
        }
        if !digits.isEmpty {
            guard let number = UInt64(digits), number <= UInt64(UInt32.max) else { return nil }
            total += number
        }
        return total <= UInt64(UInt32.max) ? UInt32(total) : nil
    }
}
