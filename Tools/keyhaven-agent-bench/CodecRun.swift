import Foundation
import KeychainModel
import KeychainStore
import KeyhavenAgentClient

/// The agent protocol's codec alone, on the frames of a real look-up: the request a program's
/// `SecItemCopyMatching` sends for one password and the agent's answer to it, each encoded and
/// decoded in a loop. The four steps a look-up through the agent pays besides the socket and the
/// search (docs/benchmarks.md, "The agent protocol's codec"). With `withAttributes` false the
/// request is that of `kSecReturnData` alone, whose answer carries the password's secret without
/// its attributes; with true, that of `kSecReturnData` with `kSecReturnAttributes`.
struct CodecRun {
    let options: Options

    struct Result {
        let requestBytes: Int
        let answerBytes: Int
        /// The best round's time per call of each step, in microseconds.
        let encodeRequest: Double
        let decodeRequest: Double
        let encodeAnswer: Double
        let decodeAnswer: Double
        var total: Double { encodeRequest + decodeRequest + encodeAnswer + decodeAnswer }
    }

    /// Calls per round; the best of `options.rounds` rounds is kept (the machine's noise only adds).
    static let calls = 20_000

    func run(withAttributes: Bool) throws -> Result {
        let size = options.sizes.min() ?? 1_000
        let home = try Fixture.use(items: size, folder: options.fixtures)
        let agent = try BenchAgent(executable: options.agent, home: home)
        defer { agent.stop() }
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = ["svce": .string(Fixture.service), "acct": .string(Fixture.account(size / 2))]
        query.limit = 1
        let request = AgentRequest.find(keychains: [KeychainHome(path: home).defaultKeychainPath], query: query,
                                        caller: AccessGroupConfiguration.currentCaller(), withSecrets: true, withAttributes: withAttributes)
        let answer = AgentResponse.answer(try AgentConnectionPool.shared.send(request, socket: agent.socket, home: home))
        guard try answer.get().items().first?.secret?.count == Fixture.secret.count else { throw BenchFailure("the agent's answer holds no item") }
        // What each side decodes: the frame after its 4-byte length.
        let requestBody = Array(AgentFraming.encode(request, home: home).dropFirst(4))
        let answerBody = Array(AgentFraming.encode(answer).dropFirst(4))
        var best = [Double](repeating: .infinity, count: 4)
        var sink = 0
        for _ in 0..<options.rounds {
            let times = [
                Self.perCall { sink &+= AgentFraming.encode(request, home: home).count },
                try Self.perCall { sink &+= try AgentFraming.decodeWithHome(AgentRequest.self, from: requestBody).body.tag == request.tag ? 1 : 0 },
                Self.perCall { sink &+= AgentFraming.encode(answer).count },
                try Self.perCall { sink &+= try AgentFraming.decode(AgentResponse.self, from: answerBody).get().items().count },
            ]
            best = zip(best, times).map { min($0, $1) }
        }
        guard sink != 0 else { throw BenchFailure("nothing was decoded") }
        return Result(requestBytes: requestBody.count + 4, answerBytes: answerBody.count + 4,
                      encodeRequest: best[0], decodeRequest: best[1], encodeAnswer: best[2], decodeAnswer: best[3])
    }

    /// `body`'s time per call over ``calls`` calls, in microseconds.
    private static func perCall(_ body: () throws -> Void) rethrows -> Double {
        let start = now()
        for _ in 0..<calls { try body() }
        return Double(now() - start) / Double(calls) / 1000
    }
}
