import Foundation
import KeychainStore
import KeyhavenAgentClient
import Testing

/// How a library client reads the agent's answer: usually in one `recv` (length and body
/// together), else in as many as it takes; anything after the frame, an oversized length or a
/// connection that ends mid-frame is an error, never a wrong answer. The agent's end here is the
/// other half of a socket pair, writing exactly the bytes each case needs.
@Suite
struct AgentClientReadTests {
    /// A client on one end of a socket pair, and the other end, which plays the agent.
    private func pair() throws -> (AgentClient, Int32) {
        var fds: [Int32] = [0, 0]
        try #require(socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0)
        return (AgentClient(adopting: fds[0], home: nil), fds[1])
    }

    private func answer(_ data: Data) -> [UInt8] {
        AgentFraming.encode(AgentResponse.answer(.bytes(data)))
    }

    private func write(_ bytes: [UInt8], to fd: Int32) {
        #expect(bytes.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) } == bytes.count)
    }

    @Test("An answer read in one piece, one larger than the first read, and one whose bytes come in three sends")
    func wholeAnswers() throws {
        let (client, agent) = try pair()
        defer { close(agent) }
        let small = Data("secret".utf8)
        write(answer(small), to: agent)
        #expect(try client.send(.echo(data: Data())).bytes() == small)

        let large = Data((0..<(3 * FrameReader.firstRead)).map { UInt8(truncatingIfNeeded: $0 * 7) })
        write(answer(large), to: agent)
        #expect(try client.send(.echo(data: Data())).bytes() == large)

        // The length alone, then half the body, then the rest, each after the client is waiting.
        let bytes = answer(large)
        let writer = Thread { [self] in
            for range in [0..<2, 2..<(bytes.count / 2), (bytes.count / 2)..<bytes.count] {
                Thread.sleep(forTimeInterval: 0.05)
                write(Array(bytes[range]), to: agent)
            }
        }
        writer.start()
        #expect(try client.send(.echo(data: Data())).bytes() == large)
    }

    @Test("Bytes after the answer, an oversized length and a connection that ends mid-frame are errors")
    func brokenAnswers() throws {
        do {
            let (client, agent) = try pair()
            defer { close(agent) }
            write(answer(Data("a".utf8)) + [0], to: agent)
            #expect(throws: StoreError(.decode, "the agent sent bytes after its answer")) { try client.exchange(.echo(data: Data())) }
        }
        do {
            let (client, agent) = try pair()
            defer { close(agent) }
            let length = UInt32(AgentFraming.maximumFrame + 1)
            write([UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF), AgentFraming.version], to: agent)
            #expect(throws: StoreError(.decode, "the agent sent an oversized message")) { try client.exchange(.echo(data: Data())) }
        }
        do {
            let (client, agent) = try pair()
            defer { close(agent) }
            write(Array(answer(Data("abc".utf8)).dropLast()), to: agent)
            shutdown(agent, Int32(SHUT_WR))  // the end of the stream, one byte short; the request can still be sent
            #expect(throws: StoreError(.notAvailable, "the agent closed the connection")) { try client.exchange(.echo(data: Data())) }
        }
    }
}
