import Foundation

/// The command line: `keyhaven-agent-bench [--agent PATH] [--fixtures DIR] [--sizes N,N,...]
/// [--rounds R] [--batch B] [--clients C] [--seconds S] [--only latency|load|codec|count|enclave]
/// [--work copy|echo|update|add] [--calls N] [--route agent|process]`.
struct Options {
    var agent: String
    var fixtures: String
    var sizes = [1_000, 10_000, 100_000]
    var rounds = 20
    var batch = 250
    var clients = 50
    var seconds = 5.0
    var only: String?
    /// What `--only count` does, and how many times.
    var work = LoadRun.Work.copyMatching
    var calls = 1_000
    var throughAgent = true

    init(_ arguments: [String]) throws {
        let beside = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path
        agent = beside + "/keyhavend"
        // Beside the Benchmarks package's homes, not in them: an item's access group is the program that
        // added it, so each benchmark program keeps homes of its own.
        fixtures = (ProcessInfo.processInfo.environment["KEYHAVEN_BENCH_FIXTURES"] ?? FileManager.default.currentDirectoryPath + "/Benchmarks/.fixtures")
            + "/agent-bench"
        var rest = arguments[...]
        while let option = rest.popFirst() {
            guard let value = rest.popFirst() else { throw BenchFailure("\(option) needs a value") }
            func number() throws -> Int {
                guard let number = Int(value), number > 0 else { throw BenchFailure("\(option) needs a positive number, not \(value)") }
                return number
            }
            switch option {
            case "--agent": agent = value
            case "--fixtures": fixtures = value
            case "--sizes":
                sizes = try value.split(separator: ",").map {
                    guard let size = Int($0), size > 0 else { throw BenchFailure("--sizes takes positive numbers, not \($0)") }
                    return size
                }
                guard !sizes.isEmpty else { throw BenchFailure("--sizes needs at least one size") }
            case "--rounds": rounds = try number()
            case "--batch": batch = try number()
            case "--clients": clients = try number()
            case "--seconds":
                guard let seconds = Double(value), seconds > 0 else { throw BenchFailure("--seconds needs a positive number") }
                self.seconds = seconds
            case "--only":
                guard ["latency", "load", "codec", "count", "enclave"].contains(value) else {
                    throw BenchFailure("--only takes latency, load, codec, count or enclave")
                }
                only = value
            case "--work":
                guard let work = LoadRun.Work(rawValue: value) else { throw BenchFailure("--work takes copy, echo, update or add") }
                self.work = work
            case "--calls": calls = try number()
            case "--route":
                guard ["agent", "process"].contains(value) else { throw BenchFailure("--route takes agent or process") }
                throughAgent = value == "agent"
            default: throw BenchFailure("unknown option \(option)")
            }
        }
        try FileManager.default.createDirectory(atPath: fixtures, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    }
}
