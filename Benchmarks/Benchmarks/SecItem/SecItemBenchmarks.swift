import Benchmark
import BenchmarkSupport
import Foundation
import Keyhaven
import KeychainServices

// Names are "<operation> <items>" so that scripts/bench.sh can pick rows out; the floor's rows
// start with "floor".
let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(metrics: [.wallClock, .mallocCountTotal, .peakMemoryResident],
                                           timeUnits: .microseconds, warmupIterations: 500, maxDuration: .seconds(3),
                                           maxIterations: 20_000)

    // The floor, in process only: a plain SQLite table and one AES-GCM operation.
    for size in Fixture.sizes {
        let floorPath = Fixture.folder + "/floor-\(size).sqlite"
        nonisolated(unsafe) var floor: Floor?
        Benchmark("floor read \(size)", configuration: .init(setup: { floor = try Floor(path: floorPath, items: size) },
                                                             teardown: { floor = nil })) { benchmark in
            var random = SystemRandomNumberGenerator()
            for _ in benchmark.scaledIterations {
                blackHole(try? floor!.get(Fixture.account(Int.random(in: 0..<size, using: &random))))
            }
        }
        Benchmark("floor write \(size)", configuration: .init(setup: { floor = try Floor(path: floorPath, items: size) },
                                                              teardown: { floor = nil })) { benchmark in
            for index in benchmark.scaledIterations {
                try? floor!.put("new-\(index)", Fixture.secret)
            }
        }
    }

    // Every operation in process, and as a library client of a running keyhavend (rows named
    // "agent ...") when $KEYHAVEN_BENCH_AGENT names one.
    for backend in Backend.measured {
        for size in Fixture.sizes {
            registerItemOperations(backend, size: size)
        }
        registerOtherOperations(backend)
        registerKeyBenchmarks(backend)
    }
}

/// Where the measured calls go.
enum Backend {
    case inProcess, agent

    static var measured: [Backend] { AgentFixture.executable == nil ? [.inProcess] : [.inProcess, .agent] }

    var prefix: String { self == .agent ? "agent " : "" }

    /// `prepare` (which points the process at a home), then for the agent, a keyhavend for it.
    func setup(_ prepare: @escaping @Sendable () throws -> Void) -> Benchmark.BenchmarkSetupHook {
        let backend = self
        return {
            try prepare()
            if backend == .agent { try AgentFixture.shared.start() }
        }
    }

    /// `cleanUp` (still through the agent), then the agent stopped.
    func teardown(_ cleanUp: @escaping @Sendable () -> Void = {}) -> Benchmark.BenchmarkTeardownHook {
        let backend = self
        return {
            cleanUp()
            if backend == .agent { AgentFixture.shared.stop() }
        }
    }
}

/// Look-up, add, update and delete on the fixture with `size` items.
func registerItemOperations(_ backend: Backend, size: Int) {
    let setup = backend.setup { try Fixture.use(items: size) }
    let prefix = backend.prefix

    Benchmark("\(prefix)copy-matching \(size)", configuration: .init(setup: setup, teardown: backend.teardown())) { benchmark in
        copyMatching(benchmark, size: size)
    }

    // Items added by a benchmark go to another service and are removed afterwards, so that
    // every benchmark sees the fixture's size.
    let cleanup = backend.teardown { Fixture.removeAdded() }

    Benchmark("\(prefix)add \(size)", configuration: .init(setup: setup, teardown: cleanup)) { benchmark in
        let run = UUID().uuidString  // the closure runs again after the warm-up
        for index in benchmark.scaledIterations {
            precondition(Fixture.addExtra("added-\(run)-\(index)") == errSecSuccess)
        }
    }

    Benchmark("\(prefix)update \(size)", configuration: .init(setup: setup, teardown: backend.teardown())) { benchmark in
        update(benchmark, size: size)
    }

    // Each iteration deletes one item that the iterations' setup added (not measured).
    Benchmark("\(prefix)delete \(size)", configuration: .init(setup: setup, teardown: cleanup)) { benchmark in
        let run = UUID().uuidString
        for index in benchmark.scaledIterations {
            benchmark.stopMeasurement()
            precondition(Fixture.addExtra("deleted-\(run)-\(index)") == errSecSuccess)
            benchmark.startMeasurement()
            precondition(SecItemDelete(Fixture.extraQuery("deleted-\(run)-\(index)") as CFDictionary) == errSecSuccess)
        }
    }
}

/// Unlock, kSecMatchLimitAll, and the Keyhaven API.
func registerOtherOperations(_ backend: Backend) {
    let prefix = backend.prefix

    // Unlock: the password's KDF (scrypt, calibrated to about a quarter second where the keychain
    // was made), then the class keys' unwrapping.
    nonisolated(unsafe) var locked: SecKeychain?
    let unlockSetup = backend.setup {
        // A home of its own: creating a keychain adds it to the home's search list, which must
        // not change the fixtures' (their look-ups would search two keychains).
        let home = Fixture.folder + "/unlock"
        try? FileManager.default.removeItem(atPath: home)
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        setenv("KEYHAVEN_AGENT", "off", 1)
        setenv("KEYHAVEN_HOME", home, 1)
        let password = Array("bench password".utf8)
        guard SecKeychainCreate(home + "/unlock.keychain-db", UInt32(password.count), password, false, nil, &locked) == errSecSuccess else {
            throw Fixture.FixtureError(status: errSecIO)
        }
    }
    Benchmark("\(prefix)unlock", configuration: .init(maxDuration: .seconds(5), maxIterations: 20, setup: unlockSetup,
                                                      teardown: backend.teardown())) { benchmark in
        let password = Array("bench password".utf8)
        for _ in benchmark.scaledIterations {
            precondition(SecKeychainLock(locked) == errSecSuccess)
            precondition(SecKeychainUnlock(locked, UInt32(password.count), password, true) == errSecSuccess)
        }
    }

    let setup = backend.setup { try Fixture.use(items: 1_000) }
    Benchmark("\(prefix)match-limit-all attributes 1000", configuration: .init(setup: setup, teardown: backend.teardown())) { benchmark in
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: Fixture.service,
                                    kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true]
        for _ in benchmark.scaledIterations {
            var result: CFTypeRef?
            precondition(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            blackHole(result)
        }
    }

    Benchmark("\(prefix)keyhaven string(forKey:) 1000", configuration: .init(setup: setup, teardown: backend.teardown())) { benchmark in
        let keychain = Keychain(service: Fixture.service)
        for _ in benchmark.scaledIterations { blackHole(try? keychain.string(forKey: Fixture.account(500))) }
    }

    Benchmark("\(prefix)keyhaven set(_:forKey:) 1000", configuration: .init(setup: setup, teardown: backend.teardown())) { benchmark in
        let keychain = Keychain(service: Fixture.service)
        for index in benchmark.scaledIterations { try? keychain.set("value \(index)", forKey: "keyhaven-set") }
    }
}

/// One look-up by service and account per iteration, returning data, of a random item of `size`.
func copyMatching(_ benchmark: Benchmark, size: Int) {
    var random = SystemRandomNumberGenerator()
    for _ in benchmark.scaledIterations {
        blackHole(Lookup.copyMatching(Fixture.account(Int.random(in: 0..<size, using: &random))))
    }
}

/// One update of the data of a random item of `size` per iteration.
func update(_ benchmark: Benchmark, size: Int) {
    var random = SystemRandomNumberGenerator()
    let changes = [kSecValueData as String: Data(repeating: 0xA5, count: 32)] as CFDictionary
    for _ in benchmark.scaledIterations {
        let query = Fixture.query(Fixture.account(Int.random(in: 0..<size, using: &random)))
        precondition(SecItemUpdate(query as CFDictionary, changes) == errSecSuccess)
    }
}
