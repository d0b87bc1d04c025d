#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import FoundationEssentials
import KeyhavenAgentClient
import KeychainModel

/// One conversation with a pinentry program (GnuPG's prompt: pinentry-curses on a terminal,
/// pinentry-gnome3 or -qt on a desktop) over its Assuan protocol on a pipe.
///
/// Every read waits at most until ``deadline``; a pinentry that hangs is killed then, one that
/// crashes or closes its output ends the conversation, and so does the client's exit (its pidfd
/// becomes readable). Each of those is ``Failure/closed``: nothing was decided.
final class Pinentry {
    enum Failure: Error, Equatable {
        /// Closed, crashed, timed out, or the client went away.
        case closed
        /// The program could not be started, or could not show the prompt: why.
        case unavailable(String)
    }

    enum Confirmation: Equatable { case ok, notOK, cancel }

    private let child: pid_t
    private let input: Int32
    private let output: Int32
    private let deadline: Double
    /// Readable when the client has exited; -1 for none.
    private let clientExit: Int32
    private var buffered: [UInt8] = []

    /// Starts `program` with `environment` (the agent's own, plus the client's display).
    init(program: String, environment: [String: String], timeout: Double, clientExit: Int32) throws(Failure) {
        var toChild: [Int32] = [-1, -1], fromChild: [Int32] = [-1, -1]
        guard Self.pipeClosedOnExec(&toChild) else { throw .unavailable("no pipe") }
        guard Self.pipeClosedOnExec(&fromChild) else {
            close(toChild[0]); close(toChild[1])
            throw .unavailable("no pipe")
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, toChild[0], 0)
        posix_spawn_file_actions_adddup2(&actions, fromChild[1], 1)
        posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        let arguments = [program]
        let cArguments = arguments.map { strdup($0) } + [nil]
        let cEnvironment = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            for pointer in cArguments { free(pointer) }
            for pointer in cEnvironment { free(pointer) }
        }
        var pid: pid_t = 0
        let spawned = posix_spawnp(&pid, program, &actions, nil, cArguments, cEnvironment)
        close(toChild[0])
        close(fromChild[1])
        guard spawned == 0 else {
            close(toChild[1]); close(fromChild[0])
            throw .unavailable("\(program) could not be started (\(String(cString: strerror(spawned)))): install pinentry-curses or set KEYHAVEN_PINENTRY")
        }
        child = pid
        input = toChild[1]
        output = fromChild[0]
        deadline = MonotonicClock.seconds() + timeout
        self.clientExit = clientExit
        // The greeting.
        guard case .ok = try response() else { throw .closed }
    }

    deinit {
        close(input)
        close(output)
        kill(child, SIGKILL)
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
    }

    /// Sets a text option or field; a pinentry that does not know it is not an error.
    func set(_ command: String, _ value: String) throws(Failure) {
        _ = try send("\(command) \(Self.escape(value))")
    }

    /// `CONFIRM`: which button was pressed.
    func confirm() throws(Failure) -> Confirmation {
        switch try send("CONFIRM") {
        case .ok: return .ok
        case .error(let code) where code == Self.notConfirmed: return .notOK
        case .error(let code): try Self.cancelled(code); return .cancel
        case .data: throw .closed
        }
    }

    /// `GETPIN`: the text typed, or nil when cancelled. The caller zeroizes it.
    func getPin() throws(Failure) -> [UInt8]? {
        var pin: [UInt8] = []
        try writeLine("GETPIN")
        while true {
            switch try response() {
            case .data(let bytes): pin += bytes
            case .ok: return pin
            case .error(let code):
                zeroize(&pin)
                try Self.cancelled(code)
                return nil
            }
        }
    }

    // MARK: The protocol

    private enum Response { case ok, error(UInt32), data([UInt8]) }

    /// GPG_ERR_NOT_CONFIRMED: the "not OK" button.
    private static let notConfirmed: UInt32 = 114

    /// Returns when an error answer is the user's Cancel (GPG_ERR_CANCELED, GPG_ERR_FULLY_CANCELED);
    /// throws when it is the prompt timing out (GPG_ERR_TIMEOUT) or failing to be shown at all (no
    /// display it can open, no terminal: any other code), which nobody decided.
    private static func cancelled(_ code: UInt32) throws(Failure) {
        switch code {
        case 99, 198: return
        case 62: throw .closed
        default: throw .unavailable("the pinentry could not show the prompt (its error \(code))")
        }
    }

    private func send(_ line: String) throws(Failure) -> Response {
        try writeLine(line)
        while true {
            let answer = try response()
            if case .data = answer { continue }
            return answer
        }
    }

    private func writeLine(_ line: String) throws(Failure) {
        var bytes = Array(line.utf8) + [UInt8(ascii: "\n")]
        defer { zeroize(&bytes) }
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
            if written < 0 && errno == EINTR { continue }
            guard written > 0 else { throw .closed }
            offset += written
        }
    }

    /// The next `OK`, `ERR` or `D` line; comments and status lines are skipped.
    private func response() throws(Failure) -> Response {
        while true {
            var line = try readLine()
            defer { zeroize(&line) }
            if line.starts(with: Array("OK".utf8)) { return .ok }
            if line.starts(with: Array("ERR ".utf8)) {
                let digits = line.dropFirst(4).prefix { $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }
                let code = UInt32(String(decoding: digits, as: UTF8.self)) ?? 0
                return .error(code & 0xFFFF)
            }
            if line.starts(with: Array("D ".utf8)) { return .data(Self.unescape(Array(line.dropFirst(2)))) }
            // "S ...", "# ...", "INQUIRE ..." (answered with END): skipped or ended.
            if line.starts(with: Array("INQUIRE".utf8)) { try writeLine("END") }
        }
    }

    private func readLine() throws(Failure) -> [UInt8] {
        while true {
            if let newline = buffered.firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffered[..<newline])
                wipe(&buffered, upTo: newline + 1)
                buffered.removeFirst(newline + 1)
                return line
            }
            guard buffered.count < 1 << 16 else { throw .closed }
            let remaining = deadline - MonotonicClock.seconds()
            guard remaining > 0 else { throw .closed }
            var fds = [pollfd(fd: output, events: Int16(POLLIN), revents: 0)]
            if clientExit >= 0 { fds.append(pollfd(fd: clientExit, events: Int16(POLLIN), revents: 0)) }
            let ready = poll(&fds, nfds_t(fds.count), Int32(min(remaining * 1000, 60_000)) + 1)
            if ready < 0 && errno == EINTR { continue }
            guard ready >= 0 else { throw .closed }
            if fds.count > 1, fds[1].revents != 0 { throw .closed }
            guard fds[0].revents != 0 else { continue }
            var chunk = [UInt8](repeating: 0, count: 4096)
            let count = read(output, &chunk, chunk.count)
            if count < 0 && errno == EINTR { continue }
            guard count > 0 else { throw .closed }
            buffered += chunk[0..<count]
            zeroize(&chunk)
        }
    }

    private func wipe(_ bytes: inout [UInt8], upTo end: Int) {
        for index in 0..<min(end, bytes.count) { bytes[index] = 0 }
    }

    /// Assuan's escaping: `%`, CR and LF as `%XX`.
    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "%": out += "%25"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    static func unescape(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index < bytes.count {
            if bytes[index] == UInt8(ascii: "%"), index + 2 < bytes.count,
               let value = UInt8(String(decoding: bytes[(index + 1)...(index + 2)], as: UTF8.self), radix: 16) {
                out.append(value)
                index += 3
            } else {
                out.append(bytes[index])
                index += 1
            }
        }
        return out
    }

    private static func pipeClosedOnExec(_ fds: inout [Int32]) -> Bool {
        guard pipe(&fds) == 0 else { return false }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return true
    }
}
