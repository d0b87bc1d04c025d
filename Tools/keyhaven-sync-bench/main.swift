// keyhaven-sync-bench: load on a running keyhaven-sync-server (scripts/bench-sync.sh starts one on
// a throw-away PostgreSQL cluster and runs this). Not installed; not a test.
//
//   keyhaven-sync-bench health URL SECONDS                  the anchor: GET /v1/health
//   keyhaven-sync-bench devices URL DEVICES SECONDS         one account, DEVICES devices pushing at once
//   keyhaven-sync-bench accounts URL ACCOUNTS SECONDS       ACCOUNTS accounts, one device each, pushing at once
//   keyhaven-sync-bench visible URL ROUNDS                  a push until a second device's long poll sees it
//   keyhaven-sync-bench idle URL[,URL...] DEVICES SECONDS   DEVICES devices long-polling, idle, then a change a second (IdleLoad)
//
// Each prints one line: successful operations per second, p50 and p99 latency of a successful
// operation (a push that lost a race is pulled, rebuilt and pushed again; its time counts).
import Foundation
import KeyhavenSyncCore
import KeyhavenSyncDevice

let arguments = CommandLine.arguments
guard arguments.count >= 4, let number = Int(arguments[3]) else {
    print("usage: keyhaven-sync-bench health|devices|accounts|visible|idle URL[,URL...] N [SECONDS]")
    exit(64)
}
let seconds = arguments.count > 4 ? Double(arguments[4]) ?? 20 : 20
if arguments[1] == "idle" {
    do {
        try await IdleLoad(urls: arguments[2].split(separator: ",").map(String.init), devices: number, seconds: Int(seconds)).run()
        exit(0)
    } catch {
        print("\(error)")
        exit(1)
    }
}
let client = try SyncClient(server: arguments[2])

switch arguments[1] {
case "health":
    try await Load.run(name: "health (anchor)", workers: 32, seconds: Double(number)) { _ in
        guard await client.isHealthy() else { throw BenchError("the server is not healthy") }
    }
case "devices":
    let account = try await BenchAccount.make(client, devices: number)
    try await Load.run(name: "push, \(number) devices on one account", workers: number, seconds: seconds) { worker in
        try await account.push(by: worker, client)
    }
case "accounts":
    var made: [BenchAccount] = []
    for _ in 0..<number { made.append(try await BenchAccount.make(client, devices: 1)) }
    let accounts = made
    try await Load.run(name: "push, \(number) accounts", workers: min(number, 64), seconds: seconds) { _ in
        try await accounts[Int.random(in: 0..<accounts.count)].push(by: 0, client)
    }
case "visible":
    let account = try await BenchAccount.make(client, devices: 2)
    var latencies: [Duration] = []
    for _ in 0..<number {
        let head = try await account.head(client)
        async let seen = client.pull(account.id, after: head.sequence, wait: 20, as: account.devices[1])
        try await Task.sleep(for: .milliseconds(50))
        let pushStart = ContinuousClock.now
        try await account.push(by: 0, client)
        _ = try await seen
        latencies.append(ContinuousClock.now - pushStart)
    }
    Load.report("visible on a second device (push to long-poll answer)", count: latencies.count, elapsed: nil, latencies: latencies)
default:
    print("unknown mode \(arguments[1])")
    exit(64)
}
