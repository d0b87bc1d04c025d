// keyhaven-agent-bench: what a program sees of a SecItem call through keyhavend, against the same
// call in process and against a bare echo on the same socket (docs/benchmarks.md, "Through the
// agent"). scripts/bench-agent.sh builds it and keyhavend in release mode and runs it. Not a test;
// not installed.
//
//   keyhaven-agent-bench [--only latency|load|codec] [--sizes 1000,10000,100000] [--rounds 20] [--batch 250]
//                        [--clients 50] [--seconds 5] [--agent PATH] [--fixtures DIR]
//   keyhaven-agent-bench --only count [--work copy|echo|update|add] [--calls 1000] [--sizes N] [--route agent|process] [--agent PATH]
//   keyhaven-agent-bench --only enclave [--rounds 20] [--batch 250]   (KEYHAVEN_TPM set: scripts/bench-tpm.sh)
//                        (the first size, 1,000 unless --sizes says)
//
// latency: in one process, alternating batches of calls in process and through the agent (and of
// echoes), per keychain size; p50 and p99 of each, and the ratios. load: CLIENTS processes reading
// through the agent at once against this process reading in process on 1 and on every core (and
// on one thread sleeping before each call, as a thread waiting for an answer sleeps), then
// the same clients sending echoes (the most any agent could serve them on this socket), then the
// same clients reading in process, each opening the keychain file itself (no agent).
// codec (only when asked): the agent protocol's encoding and decoding alone, on a real look-up's
// request and answer, at the smallest size. count (only when asked): a number of look-ups or echoes
// through the agent, or of look-ups in process, nothing timed, for counting instructions
// (scripts/bench-agent-instructions.sh). enclave (only when asked): a signature with a Secure
// Enclave key in the TPM against one with a keychain key, both through the agent (EnclaveRun.swift).
import Foundation

var arguments = Array(CommandLine.arguments.dropFirst())
if arguments.first == "worker", arguments.count == 6, let work = LoadRun.Work(rawValue: arguments[1]), let size = Int(arguments[2]),
   let start = UInt64(arguments[3]), let end = UInt64(arguments[4]), ["agent", "process"].contains(arguments[5]) {
    LoadRun.worker(work, size: size, start: start, end: end, throughAgent: arguments[5] == "agent")
    exit(0)
}

do {
    let options = try Options(arguments)
    if options.only == "codec" {
        for (name, withAttributes) in [("its data alone", false), ("its data and attributes", true)] {
            let result = try CodecRun(options: options).run(withAttributes: withAttributes)
            print("agent protocol codec, one look-up of a password, \(name) (request \(result.requestBytes) bytes, answer \(result.answerBytes) bytes), "
                  + "best of \(options.rounds) rounds of \(CodecRun.calls):")
            print("  encode request \(format(result.encodeRequest, 2)) us, decode request \(format(result.decodeRequest, 2)) us, "
                  + "encode answer \(format(result.encodeAnswer, 2)) us, decode answer \(format(result.decodeAnswer, 2)) us, total \(format(result.total, 2)) us")
        }
        exit(0)
    }
    if options.only == "enclave" {
        let result = try EnclaveRun(options: options).run()
        print("P-256 signature through the agent, \(options.rounds) rounds of \(options.batch) alternating calls after one to warm up "
              + "(TPM: \(ProcessInfo.processInfo.environment["KEYHAVEN_TPM"] ?? "")):")
        print("  keychain key: p50 \(format(result.keychain.p50)) us, p99 \(format(result.keychain.p99)) us")
        print("  TPM key (Secure Enclave): p50 \(format(result.tpm.p50)) us, p99 \(format(result.tpm.p99)) us, "
              + "\(format(result.tpm.p50 / result.keychain.p50)) x the keychain key")
        exit(0)
    }
    if options.only == "count" {
        try CountRun(options: options, size: options.sizes[0]).run()
        print("\(options.calls) \(options.work.rawValue) calls \(options.throughAgent ? "through the agent" : "in process") after 20 to warm up, \(options.sizes[0]) items")
        exit(0)
    }
    print("keyhaven-agent-bench: \(ProcessInfo.processInfo.activeProcessorCount) cores, \(options.rounds) rounds of \(options.batch) calls")
    let floor = SocketFloor.measure()
    print("socket floor (two threads, blocking read and write, 40 bytes each way): p50 \(format(floor.p50)) us, p99 \(format(floor.p99)) us")
    if options.only != "load" {
        print("")
        print("| items | operation | in process p50 (us) | in process p99 | agent p50 | agent p99 | agent p50 / in process | agent p99 / p50 | echo p50 | agent p50 / echo |")
        print("|---|---|---|---|---|---|---|---|---|---|")
        for size in options.sizes {
            let (rows, echo) = try LatencyRun(options: options, size: size).run()
            for row in rows {
                print("| \(size) | \(row.operation) | \(format(row.inProcess.p50)) | \(format(row.inProcess.p99)) | \(format(row.agent.p50)) | \(format(row.agent.p99)) "
                      + "| \(format(row.agent.p50 / row.inProcess.p50, 2)) | \(format(row.agent.p99 / row.agent.p50, 2)) "
                      + "| \(format(echo.p50)) | \(format(row.agent.p50 / echo.p50, 2)) |")
            }
            print("| \(size) | echo | | | \(format(echo.p50)) | \(format(echo.p99)) | | \(format(echo.p99 / echo.p50, 2)) | | |")
        }
    }
    if options.only != "latency" {
        let size = options.sizes.contains(10_000) ? 10_000 : options.sizes[0]
        let result = try LoadRun(options: options, size: size).run()
        print("")
        print("copy-matching, \(size) items, \(format(options.seconds)) s:")
        for anchor in result.inProcess {
            print("  in process, \(anchor.threads) thread(s): \(Int(anchor.rate))/s, p50 \(format(anchor.latencies.p50)) us, p99 \(format(anchor.latencies.p99)) us, "
                  + "CPU a call \(format(anchor.cpuPerCall)) us")
        }
        print("  in process, 1 thread sleeping \(LoadRun.napMicroseconds) us before each call: p50 \(format(result.afterNaps.latencies.p50)) us, "
              + "p99 \(format(result.afterNaps.latencies.p99)) us, CPU a call \(format(result.afterNaps.cpuPerCall)) us, of which the sleep alone \(format(result.afterNaps.cpuPerNap)) us")
        let best = result.inProcess.map(\.rate).max() ?? 1
        let cores = Double(ProcessInfo.processInfo.activeProcessorCount)
        for (name, clients) in [("look-ups", result.lookUps), ("echoes", result.echoes)] {
            print("  agent, \(options.clients) client processes, \(name): \(Int(clients.rate))/s (\(format(100 * clients.rate / best, 0))% of the best in process), "
                  + "p50 \(format(clients.latencies.p50)) us, p99 \(format(clients.latencies.p99)) us, worst client p99 \(format(clients.worstClientP99)) us, "
                  + "fewest calls by one client \(clients.fewestCalls); CPU a call: agent \(clients.agentCPUPerCall.map { format($0) } ?? "unknown") us, "
                  + "clients \(format(clients.clientsCPUPerCall)) us")
        }
        let alone = result.inProcessClients
        print("  in process, \(options.clients) client processes (each reading the file itself), look-ups: \(Int(alone.rate))/s "
              + "(\(format(100 * alone.rate / best, 0))% of the best in process), p50 \(format(alone.latencies.p50)) us, p99 \(format(alone.latencies.p99)) us, "
              + "worst client p99 \(format(alone.worstClientP99)) us, fewest calls by one client \(alone.fewestCalls); CPU a call: clients \(format(alone.clientsCPUPerCall)) us; "
              + "agent / these \(format(result.lookUps.rate / max(alone.rate, 1), 2))")
        // What 80% of the best in process would allow: the machine's cores over that rate.
        print("  80% of the best in process allows at most \(format(cores * 1e6 / (0.8 * best))) us of the machine's CPU a call")
        // What the clients' own CPU alone allows: the most an agent that cost nothing could reach.
        let clientsBound = cores * 1e6 / max(result.lookUps.clientsCPUPerCall, 0.001)
        print("  the clients' own CPU alone (\(format(result.lookUps.clientsCPUPerCall)) us a look-up) allows at most \(Int(clientsBound))/s "
              + "(\(format(100 * clientsBound / best, 0))% of the best in process), with an agent that costs nothing")
        // A look-up's own work in process, plus the bare exchange as these clients paid for it in
        // this run (the echo, both sides): what a call through any agent would cost the machine if
        // the look-up's work cost what it costs in one process, in a hot loop and after a sleep.
        if let hot = result.inProcess.first, let echoAgent = result.echoes.agentCPUPerCall {
            let exchange = echoAgent + result.echoes.clientsCPUPerCall
            let afterSleep = max(0, result.afterNaps.cpuPerCall - result.afterNaps.cpuPerNap)
            for (name, work) in [("on one thread in process", hot.cpuPerCall), ("after a sleep (the sleep's own CPU taken off)", afterSleep)] {
                let floor = work + exchange
                print("  a look-up's work \(name), \(format(work)) us, and an echo under this load (\(format(echoAgent)) us in the agent, "
                      + "\(format(result.echoes.clientsCPUPerCall)) us in the clients) cost \(format(floor)) us a call: at most \(Int(cores * 1e6 / floor))/s "
                      + "(\(format(100 * cores * 1e6 / floor / best, 0))% of the best in process)")
            }
        }
    }
} catch {
    FileHandle.standardError.write(Data("keyhaven-agent-bench: \(error)\n".utf8))
    exit(1)
}
