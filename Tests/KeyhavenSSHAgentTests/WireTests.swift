import KeyhavenSSHAgent
import Testing

/// The SSH wire encoding's edges (RFC 4251, section 5).
struct WireTests {
    @Test("mpints: zero is empty, a set top bit gets a zero byte, leading zeros go; negative and padded ones are refused")
    func mpints() throws {
        for (magnitude, encoded) in [([UInt8](), [UInt8]()), ([0, 0], []), ([0x7F], [0x7F]), ([0x80], [0, 0x80]),
                                     ([0, 0x01, 0x02], [0x01, 0x02]), ([0xFF, 0x00], [0, 0xFF, 0x00])] {
            var writer = SSHWriter()
            writer.mpint(magnitude)
            #expect(writer.bytes == [0, 0, 0, UInt8(encoded.count)] + encoded)
            var reader = SSHReader(writer.bytes)
            #expect(try reader.mpint() == Array(magnitude.drop { $0 == 0 }))
            try reader.finish()
        }
        var negative = SSHReader([0, 0, 0, 1, 0x80])
        #expect(throws: SSHAgentError.self) { try negative.mpint() }
        var padded = SSHReader([0, 0, 0, 2, 0, 0x01])
        #expect(throws: SSHAgentError.self) { try padded.mpint() }
    }

    @Test("A length past the end, a short integer, bytes after the end and text that is not UTF-8 are malformed")
    func malformed() throws {
        var past = SSHReader([0, 0, 0, 9, 1, 2])
        #expect(throws: SSHAgentError.self) { try past.string() }
        var short = SSHReader([0, 1])
        #expect(throws: SSHAgentError.self) { try short.uint32() }
        var trailing = SSHReader([0, 0, 0, 1, 7, 9])
        #expect(try trailing.uint32() == 1)
        #expect(try trailing.byte() == 7)
        #expect(throws: SSHAgentError.self) { try trailing.finish() }
        var latin = SSHReader([0, 0, 0, 1, 0xE9])
        #expect(throws: SSHAgentError.self) { try latin.text() }
        #expect(throws: SSHAgentError.self) { try AgentRequest(message: []) }
        #expect(throws: SSHAgentError.self) { try AgentRequest(message: [MessageType.requestIdentities, 0]) }
    }

    @Test("Replies are framed: success, failure, identities, a signature, query's names")
    func replies() {
        #expect(AgentReply.success.encoded == [0, 0, 0, 1, 6])
        #expect(AgentReply.failure.encoded == [0, 0, 0, 1, 5])
        #expect(AgentReply.identities([]).encoded == [0, 0, 0, 5, 12, 0, 0, 0, 0])
        #expect(AgentReply.identities([(keyBlob: [1, 2], comment: "c")]).encoded == [0, 0, 0, 16, 12, 0, 0, 0, 1, 0, 0, 0, 2, 1, 2, 0, 0, 0, 1, 99])
        #expect(AgentReply.signature([9]).encoded == [0, 0, 0, 6, 14, 0, 0, 0, 1, 9])
        var names = SSHWriter()
        names.text("query")
        #expect(AgentReply.extensionResponse(name: "query", content: names.bytes).encoded
                == [0, 0, 0, 19, 29, 0, 0, 0, 5] + Array("query".utf8) + [0, 0, 0, 5] + Array("query".utf8))
    }
}
