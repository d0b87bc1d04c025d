import Foundation
import KeychainStore
import KeyhavenAgentClient
import KeychainTestSupport
import Testing

/// Each connection answered on a thread of its own keeps what the agent promises: answers in
/// order, a client that stops reading holds one answer and blocks no one, a slow request holds
/// only its own client, and the echo that measures the path's floor touches nothing.
@Suite(.freshKeychain())
struct AgentConnectionTests {
    let caller = Caller(accessGroups: [AccessGroupConfiguration.defaultGroup])

    /// An agent with `count` items added by this program (so it may read them without a prompt).
    func agent(items count: Int) throws -> (CommandRunner, AgentSocket, String) {
        let k = try CommandRunner()
        #expect(try k.run("agent", "start").status == 0)
        let socket = AgentSocket(path: k.runtime + "/keyhaven/agent.sock")
        let keychain = TestHome.current!.keychainPath
        let client = try AgentClient(socket: socket)
        for index in 0..<count {
            let item = NewItem(itemClass: .genericPassword, attributes: ["acct": .string("quick-\(index)")], secret: Data("secret \(index)".utf8))
            _ = try client.send(.add(keychain: keychain, item: item, caller: caller))
        }
        return (k, socket, keychain)
    }

    func find(_ index: Int, in keychain: String) -> AgentRequest {
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = ["acct": .string("quick-\(index)")]
        query.limit = 1
        return .find(keychains: [keychain], query: query, caller: caller, withSecrets: true)
    }

    @Test("An echo comes back as sent, touching no keychain; an echo over 64 KiB is refused and the connection goes on")
    func echo() throws {
        let (k, socket, keychain) = try agent(items: 1)
        defer { k.finish() }
        let client = try AgentClient(socket: socket)
        let payload = Data((0..<1000).map { UInt8(truncatingIfNeeded: $0) })
        #expect(try client.send(.echo(data: payload)).bytes() == payload)
        #expect(throws: StoreError(.invalidParameter, "an echo of more than 65536 bytes")) {
            try client.send(.echo(data: Data(count: AgentFraming.maximumEcho + 1)))
        }
        #expect(try client.send(find(0, in: keychain)).items().first?.secret == Data("secret 0".utf8))
    }

    @Test("Five thousand look-ups sent at once on one connection are answered in order")
    func pipelinedLookUps() throws {
        let (k, socket, keychain) = try agent(items: 50)
        defer { k.finish() }
        // The first request identifies this program; the rest reuse what it found.
        #expect(try AgentClient(socket: socket).send(find(0, in: keychain)).items().count == 1)
        let fd = try rawConnect(socket.path)
        defer { close(fd) }
        let count = 5_000
        let frames = (0..<count).flatMap { AgentFraming.encode(find($0 % 50, in: keychain)) }
        let writer = Thread {
            var offset = 0
            while offset < frames.count {
                let sent = frames.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
                guard sent > 0 else { return }
                offset += sent
            }
        }
        writer.start()
        var wrong = 0
        for index in 0..<count {
            var header = [UInt8](repeating: 0, count: 4)
            guard recv(fd, &header, 4, Int32(MSG_WAITALL)) == 4 else {
                Issue.record("the agent closed the connection after \(index) answers")
                return
            }
            var body = [UInt8](repeating: 0, count: header.reduce(0) { $0 << 8 | Int($1) })
            guard recv(fd, &body, body.count, Int32(MSG_WAITALL)) == body.count else {
                Issue.record("a truncated answer")
                return
            }
            let response = try AgentFraming.decode(AgentResponse.self, from: body)
            if try response.get().items().first?.secret != Data("secret \(index % 50)".utf8) { wrong += 1 }
        }
        #expect(wrong == 0)
    }

    @Test("A look-up is answered while four other clients' unlocks of another keychain derive keys")
    func answeredWhileOthersUnlock() throws {
        let (k, socket, keychain) = try agent(items: 1)
        defer { k.finish() }
        let client = try AgentClient(socket: socket)
        // The first request identifies this program.
        #expect(try client.send(find(0, in: keychain)).items().count == 1)
        let other = TestHome.current!.path + "/other.keychain-db"
        _ = try client.send(.create(keychain: other, password: Data("the right one".utf8)))
        _ = try client.send(.lock(keychain: other))
        // Four wrong passwords, each on its own connection: each derives a key (scrypt, about a
        // quarter second), the most the agent derives at once (PasswordKDF.concurrentDerivations).
        let unlocking = try (0..<4).map { _ in try rawConnect(socket.path) }
        defer { unlocking.forEach { close($0) } }
        let unlock = AgentFraming.encode(AgentRequest.unlock(keychain: other, password: Data("a wrong one".utf8)))
        for fd in unlocking {
            #expect(unlock.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == unlock.count)
        }
        usleep(100_000)
        // Behind the unlocks (one thread answering, or a pool they fill), it would wait for them.
        #expect(try client.send(find(0, in: keychain)).items().first?.secret == Data("secret 0".utf8))
        var pending = unlocking.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        #expect(poll(&pending, nfds_t(pending.count), 0) == 0, "an unlock was answered before the look-up")
        // The unlocks then fail as they should, and the other keychain stays locked.
        for fd in unlocking {
            var header = [UInt8](repeating: 0, count: 4)
            #expect(recv(fd, &header, 4, Int32(MSG_WAITALL)) == 4)
            var body = [UInt8](repeating: 0, count: header.reduce(0) { $0 << 8 | Int($1) })
            #expect(recv(fd, &body, body.count, Int32(MSG_WAITALL)) == body.count)
            #expect(try AgentFraming.decode(AgentResponse.self, from: body).error?.code == .authFailed)
        }
        #expect(try client.send(.status(keychain: other)).status().isUnlocked == false)
    }

    @Test("A client that sends look-ups and never reads holds one answer; others are answered meanwhile")
    func slowReaderOfLookUps() throws {
        let (k, socket, keychain) = try agent(items: 1)
        defer { k.finish() }
        #expect(try AgentClient(socket: socket).send(find(0, in: keychain)).items().count == 1)
        let flooding = try rawConnect(socket.path)
        defer { close(flooding) }
        _ = fcntl(flooding, F_SETFL, fcntl(flooding, F_GETFL) | O_NONBLOCK)
        let flood = Array(repeating: AgentFraming.encode(find(0, in: keychain)), count: 1_000).flatMap { $0 }
        #expect(sendWithoutReading(flood, on: flooding, for: .milliseconds(1_500)) > 0)
        let more = sendWithoutReading(flood, on: flooding, for: .milliseconds(1_500))
        #expect(more < 64 << 10, "the agent went on reading a client that does not read its answers (\(more) bytes more)")
        // Another client is answered, a look-up and a hello alike.
        let other = try AgentClient(socket: socket)
        #expect(try other.send(find(0, in: keychain)).items().first?.secret == Data("secret 0".utf8))
        #expect(try other.send(.hello).hello().home == TestHome.current!.path)
    }
}
