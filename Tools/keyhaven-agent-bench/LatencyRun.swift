import Foundation

/// One keychain size: copy-matching, add and update, each in process and through the agent in
/// alternating batches within this one process, with the agent's echo as the floor of the path.
struct LatencyRun {
    let options: Options
    let size: Int

    struct Row {
        let operation: String
        let inProcess: Latencies
        let agent: Latencies
    }

    func run() throws -> (rows: [Row], echo: Latencies) {
        let home = try Fixture.use(items: size, folder: options.fixtures)
        let agent = try BenchAgent(executable: options.agent, home: home)
        defer { agent.stop() }
        var random = SystemRandomNumberGenerator()
        let payload = Data(repeating: 0x5A, count: 32)
        var echo = Latencies()
        var copy = (Latencies(), Latencies())
        var add = (Latencies(), Latencies())
        var update = (Latencies(), Latencies())
        let run = UInt32.random(in: 0...UInt32.max)
        // Warm-up on both paths: pages, connections, the agent's first identification of this program.
        for through in [false, true] {
            BenchAgent.route(throughAgent: through)
            for _ in 0..<200 { BenchCalls.copyMatching(Int.random(in: 0..<size, using: &random)) }
        }
        for _ in 0..<200 { agent.echo(payload) }
        for round in 0..<options.rounds {
            // Which path goes first changes every round, so neither always follows the other.
            for through in round % 2 == 0 ? [false, true] : [true, false] {
                BenchAgent.route(throughAgent: through)
                var latencies = Latencies()
                for _ in 0..<options.batch {
                    let index = Int.random(in: 0..<size, using: &random)
                    timed(&latencies) { BenchCalls.copyMatching(index) }
                }
                if through { copy.1.append(contentsOf: latencies) } else { copy.0.append(contentsOf: latencies) }
                // Writes are fewer: each is a durable transaction.
                var adds = Latencies(), updates = Latencies()
                for call in 0..<max(1, options.batch / 10) {
                    let account = "added-\(run)-\(round)-\(through)-\(call)"
                    timed(&adds) { BenchCalls.add(account) }
                    let index = Int.random(in: 0..<size, using: &random)
                    timed(&updates) { BenchCalls.update(index, round: round) }
                }
                if through { add.1.append(contentsOf: adds); update.1.append(contentsOf: updates) } else {
                    add.0.append(contentsOf: adds); update.0.append(contentsOf: updates)
                }
            }
            for _ in 0..<options.batch { timed(&echo) { agent.echo(payload) } }
        }
        BenchAgent.route(throughAgent: false)
        Fixture.removeAdded()
        return ([Row(operation: "copy-matching", inProcess: copy.0, agent: copy.1),
                 Row(operation: "add", inProcess: add.0, agent: add.1),
                 Row(operation: "update", inProcess: update.0, agent: update.1)], echo)
    }
}
