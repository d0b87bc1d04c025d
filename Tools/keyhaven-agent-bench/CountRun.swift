import Foundation

/// A fixed number of calls through the agent, nothing timed: for counting the agent's
/// instructions a call under callgrind (scripts/bench-agent-instructions.sh runs it twice, with N
/// and 2N calls, and takes the difference, so the agent's start-up and the warm-up cancel out).
struct CountRun {
    let options: Options
    let size: Int

    /// Makes 20 calls of ``Options/work`` to warm up, then ``Options/calls`` more: through an
    /// agent started for them and stopped after (under callgrind, it writes its profile as it
    /// exits), or with `--route process` in this process (look-ups, updates and adds).
    func run() throws {
        // Adds are counted as the difference of two runs: removing the first run's items in the
        // second would be counted with it. They go at the next run of another kind.
        let home = try Fixture.use(items: size, folder: options.fixtures, keepingAdded: options.work == .add)
        guard options.throughAgent else {
            guard let call = BenchCalls.call(for: options.work) else {
                throw BenchFailure("an echo is an agent's; --route process takes --work copy, update or add")
            }
            calls(call)
            return
        }
        let agent = try BenchAgent(executable: options.agent, home: home)
        defer { agent.stop() }
        BenchAgent.route(throughAgent: true)
        calls(LoadRun.call(for: options.work, socket: agent.socket, home: home))
    }

    /// A fixed sequence of items spread over the keychain, so that two runs count the same.
    private func calls(_ call: (Int) -> Void) {
        for index in 0..<(20 + options.calls) { call(index * 7_919 % size) }
    }
}
