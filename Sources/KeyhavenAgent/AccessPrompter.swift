#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeychainModel
import KeychainStore
import Synchronization

/// What the agent must ask the user before it answers a request (docs/access.md).
package struct AccessQuestion: Sendable {
    package enum Subject: Sendable {
        /// Items of `keychain` the program is not trusted with; `names` are their labels.
        case items(keychain: String, references: [PersistentReference], names: [String])
        /// Access groups the program was not granted.
        case groups([String])
        /// Items of `keychain` whose access control asks for the user's presence (the password).
        case presence(keychain: String, names: [String])
    }

    package let subject: Subject
    /// The keychain whose password the user types after Allow (the items', or the default one
    /// for groups, where grants are kept).
    package let keychain: String
}

/// The user's answer: Allow (this request) or Always Allow (remembered).
package enum AccessAnswer: Sendable { case allowOnce, alwaysAllow }

/// Asks the user through pinentry: the program, what it wants and the keychain; OK = Allow,
/// the "not OK" button = Always Allow, Cancel = Deny; then the keychain's password, when it has
/// one. One prompt at a time per program: another request of the same program meanwhile fails
/// at once with errSecInteractionNotAllowed, so a program that asks in a loop makes no storm.
///
/// The prompt goes to the session's display (``SessionDisplayFinder``), whatever the client's
/// memory says, and to the client's terminal. One that cannot be shown, or that closes before it
/// is answered, is said in the agent's log (the program and the reason, never a secret).
///
/// Statuses: no terminal and no display, or no pinentry program: errSecInteractionNotAllowed;
/// Deny, or three wrong passwords: errSecAuthFailed; the prompt closed, crashed, timed out
/// (`KEYHAVEN_PROMPT_TIMEOUT`, 60 s), the password entry cancelled, or the client gone:
/// errSecUserCanceled.
package final class AccessPrompter: Sendable {
    /// `KEYHAVEN_PINENTRY`, else `pinentry` on the agent's PATH.
    let program: String
    let timeout: Double
    let displays: SessionDisplayFinder
    /// The agent's environment, which pinentry starts with (its display variables replaced).
    let environment: [String: String]
    /// The agent's log (the program and what happened, never a secret).
    package let log: @Sendable (String) -> Void
    private let open = Mutex<Set<Data>>([])

    package init(environment: [String: String] = ProcessInfo.processInfo.environment,
                 log: @escaping @Sendable (String) -> Void = AccessPrompter.standardError) {
        program = environment["KEYHAVEN_PINENTRY"].flatMap { $0.isEmpty ? nil : $0 } ?? "pinentry"
        timeout = environment["KEYHAVEN_PROMPT_TIMEOUT"].flatMap(Double.init).map { max(1, $0) } ?? 60
        displays = SessionDisplayFinder(environment: environment)
        self.environment = environment
        self.log = log
    }

    /// The agent's log: its standard error, a line at a time.
    package static func standardError(_ line: String) {
        let bytes = Array("keyhavend: \(line)\n".utf8)
        _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    }

    /// Blocks until the user answers (on the thread of the connection that asked).
    package func ask(_ question: AccessQuestion, client: ClientProcess, identity: ApplicationIdentity,
                     database: KeychainDatabase) throws(StoreError) -> AccessAnswer {
        try converse(client: client, identity: identity) { pinentry, terminal, terminalType in
            try self.converse(pinentry, question: question, identity: identity, terminal: terminal,
                              terminalType: terminalType, database: database)
        }
    }

    /// Asks for the keychain's password and unlocks it with that (three tries): the Secret
    /// Service's Unlock prompt. Statuses as ``ask(_:client:identity:database:)``'s.
    package func unlock(_ database: KeychainDatabase, client: ClientProcess, identity: ApplicationIdentity) throws(StoreError) {
        _ = try converse(client: client, identity: identity) { pinentry, terminal, terminalType in
            try self.setUp(pinentry, terminal: terminal, terminalType: terminalType)
            let program = identity.path.isEmpty ? "A program" : "\"\(Self.shown(Self.name(of: identity.path)))\""
            try pinentry.set("SETDESC", "\(program) asks to unlock the keychain \"\(Self.shown(Self.name(of: database.path)))\".")
            try self.askPassword(pinentry, database: database, unlocking: true)
            return .allowOnce
        }
    }

    /// Asks the user to allow one use that `description` names: a signature with an SSH key added
    /// to confirm each use. With `standing`, the label of a second button that allows this use and
    /// those like it (an approval): true when the user chose it. Statuses as
    /// ``ask(_:client:identity:database:)``'s.
    package func confirm(_ description: String, client: ClientProcess, identity: ApplicationIdentity,
                         standing: String? = nil) throws(StoreError) -> Bool {
        let answer = try converse(client: client, identity: identity) { pinentry, terminal, terminalType in
            try self.setUp(pinentry, terminal: terminal, terminalType: terminalType)
            try pinentry.set("SETDESC", description)
            try pinentry.set("SETOK", standing == nil ? "Allow" : "Allow once")
            if let standing { try pinentry.set("SETNOTOK", standing) }
            try pinentry.set("SETCANCEL", "Deny")
            switch try pinentry.confirm() {
            case .ok: return .allowOnce
            case .notOK where standing != nil: return .alwaysAllow
            case .notOK, .cancel: throw StoreError(.authFailed, "the user denied the use")
            }
        }
        return answer == .alwaysAllow
    }

    /// Starts pinentry on the session's display and the client's terminal, one prompt at a time
    /// per program, and maps its failures to statuses; says in the log a prompt that could not be
    /// shown or closed unanswered.
    private func converse(client: ClientProcess, identity: ApplicationIdentity,
                          _ body: (Pinentry, String?, String) throws -> AccessAnswer) throws(StoreError) -> AccessAnswer {
        let key = Data(identity.path.utf8) + identity.digest
        let who = "\(identity.path.isEmpty ? "an unidentified program" : Self.shown(identity.path)) (pid \(client.pid))"
        // Not logged: a program that asks in a loop would fill the log as it would the screen.
        guard open.withLock({ $0.insert(key).inserted }) else {
            throw StoreError(.interactionNotAllowed, "a prompt for this program is already open")
        }
        defer { _ = open.withLock { $0.remove(key) } }
        let clientEnvironment = client.environment
        let terminal = client.terminal
        let (display, unanswered) = displays.find(client: clientEnvironment)
        guard terminal != nil || display != nil else {
            log("no prompt for \(who): it has no terminal, and no display was found (\(unanswered.joined(separator: "; ")))")
            throw StoreError(.interactionNotAllowed, "no prompt can be shown: the program has no terminal, and the agent found no "
                             + "display of the user's session (see the agent's log)")
        }
        var environment = self.environment
        for name in SessionDisplay.names { environment[name] = display?.variables[name] }
        if environment["DBUS_SESSION_BUS_ADDRESS"] == nil { environment["DBUS_SESSION_BUS_ADDRESS"] = displays.userBusAddress }
        // The client's terminal type, for pinentry-curses drawing on that terminal.
        let terminalType = clientEnvironment?["TERM"].flatMap { $0.isEmpty ? nil : $0 } ?? "xterm"
        environment["TERM"] = terminalType
        let place = [display?.description, terminal.map { "terminal \($0)" }].compactMap { $0 }.joined(separator: " and ")
        do {
            let pinentry = try Pinentry(program: program, environment: environment, timeout: timeout, clientExit: client.exitDescriptor)
            return try body(pinentry, terminal, terminalType)
        } catch let error as StoreError {
            throw error
        } catch let failure as Pinentry.Failure {
            if case .unavailable(let reason) = failure {
                log("no prompt for \(who) on \(place): \(reason)")
                throw StoreError(.interactionNotAllowed, "no prompt can be shown: \(reason)")
            }
            log("the prompt for \(who) on \(place) closed, crashed or timed out before it was answered")
            throw StoreError(.userCanceled, "the prompt was closed before it was answered")
        } catch {
            log("the prompt for \(who) on \(place) closed before it was answered")
            throw StoreError(.userCanceled, "the prompt was closed before it was answered")
        }
    }

    private func setUp(_ pinentry: Pinentry, terminal: String?, terminalType: String) throws {
        if let terminal {
            try pinentry.set("OPTION", "ttyname=\(terminal)")
            try pinentry.set("OPTION", "ttytype=\(terminalType)")
        }
        try pinentry.set("SETTITLE", "Keyhaven")
        try pinentry.set("SETTIMEOUT", String(Int(timeout)))
    }

    /// The confirmation, then the keychain's password when it has one.
    private func converse(_ pinentry: Pinentry, question: AccessQuestion, identity: ApplicationIdentity, terminal: String?,
                          terminalType: String, database: KeychainDatabase) throws -> AccessAnswer {
        try setUp(pinentry, terminal: terminal, terminalType: terminalType)
        if case .presence = question.subject { return try confirmPresence(pinentry, question: question, identity: identity, database: database) }
        try pinentry.set("SETDESC", Self.describe(question, identity: identity))
        try pinentry.set("SETOK", "Allow")
        try pinentry.set("SETNOTOK", "Always Allow")
        try pinentry.set("SETCANCEL", "Deny")
        let answer: AccessAnswer
        switch try pinentry.confirm() {
        case .ok: answer = .allowOnce
        case .notOK: answer = .alwaysAllow
        case .cancel: throw StoreError(.authFailed, "the user denied the program access")
        }
        guard database.status().hasPassword else { return answer }
        try pinentry.set("SETDESC", "Enter the password of the keychain \"\(Self.name(of: question.keychain))\" to allow "
                         + "\(Self.name(of: identity.path)).")
        try askPassword(pinentry, database: database)
        return answer
    }

    /// An item that needs the user's presence: the keychain's password, or (a keychain without
    /// one) a confirmation.
    private func confirmPresence(_ pinentry: Pinentry, question: AccessQuestion, identity: ApplicationIdentity,
                                 database: KeychainDatabase) throws -> AccessAnswer {
        try pinentry.set("SETDESC", Self.describe(question, identity: identity))
        guard database.status().hasPassword else {
            try pinentry.set("SETOK", "Allow")
            try pinentry.set("SETCANCEL", "Deny")
            guard try pinentry.confirm() == .ok else { throw StoreError(.authFailed, "the user denied the use of the item") }
            return .allowOnce
        }
        try askPassword(pinentry, database: database)
        return .allowOnce
    }

    /// GETPIN until the keychain's password is given (three tries).
    private func askPassword(_ pinentry: Pinentry, database: KeychainDatabase, unlocking: Bool = false) throws {
        try pinentry.set("SETPROMPT", "Password:")
        try pinentry.set("SETOK", "OK")
        try pinentry.set("SETCANCEL", "Cancel")
        for _ in 0..<3 {
            guard var password = try pinentry.getPin() else { throw StoreError(.userCanceled, "the password was not given") }
            let verified = unlocking ? (try? database.unlock(password: password)) != nil : (try? database.verifyPassword(password)) != nil
            zeroize(&password)
            if verified { return }
            try pinentry.set("SETERROR", "Wrong password; try again.")
        }
        throw StoreError(.authFailed, "the keychain's password was not given")
    }

    /// The prompt's text: which program, what it wants, in which keychain. Labels and paths only.
    static func describe(_ question: AccessQuestion, identity: ApplicationIdentity) -> String {
        let program = identity.path.isEmpty ? "An unidentified program" : "\"\(shown(name(of: identity.path)))\" (\(shown(identity.path)))"
        let keychain = shown(name(of: question.keychain))
        let tampered = identity.isTampered ? "\nIt was started with code injected or is being debugged." : ""
        switch question.subject {
        case .items(_, let references, let names):
            let item = names.first.map { "\"\(shown($0))\"" } ?? "an item"
            let more = references.count > 1 ? " and \(references.count - 1) other item\(references.count > 2 ? "s" : "")" : ""
            return "\(program) wants to use \(item)\(more) in the keychain \"\(keychain)\".\(tampered)"
        case .presence(_, let names):
            let item = names.first.map { "\"\(shown($0))\"" } ?? "an item"
            return "\(program) wants to use \(item) in the keychain \"\(keychain)\", which asks for you each time it is used.\(tampered)"
        case .groups(let groups):
            let list = groups.map { $0 == "*" ? "every access group" : "\"\(shown($0))\"" }.joined(separator: ", ")
            return "\(program) wants to use the access group\(groups.count > 1 ? "s" : "") \(list) in the keychain \"\(keychain)\".\(tampered)"
        }
    }

    static func name(of path: String) -> String { path.split(separator: "/").last.map(String.init) ?? path }

    /// Text from an item (a label) or a path as a prompt shows it: one line, control characters
    /// as spaces (and the invisible ones that reorder text), at most 80 characters, so it cannot
    /// dress itself up as the prompt's own words.
    static func shown(_ text: String) -> String {
        let hidden: Set<Unicode.GeneralCategory> = [.control, .format, .lineSeparator, .paragraphSeparator]
        let line = String(String.UnicodeScalarView(text.unicodeScalars.map { hidden.contains($0.properties.generalCategory) ? " " : $0 }))
        return line.count > 80 ? String(line.prefix(79)) + "…" : line
    }
}
