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

    for size in Fixture.sizes {
        let setup: Benchmark.BenchmarkSetupHook = { try Fixture.use(items: size) }

        Benchmark("copy-matching \(size)", configuration: .init(setup: setup)) { benchmark in
            copyMatching(benchmark, size: size)
        }

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

        // Items added by a benchmark go to another service and are removed afterwards, so that
        // every benchmark sees the fixture's size.
        let cleanup: Benchmark.BenchmarkTeardownHook = { Fixture.removeAdded() }

        Benchmark("add \(size)", configuration: .init(setup: setup, teardown: cleanup)) { benchmark in
            let run = UUID().uuidString  // the closure runs again after the warm-up
            for index in benchmark.scaledIterations {
                precondition(Fixture.addExtra("added-\(run)-\(index)") == errSecSuccess)
            }
        }

        Benchmark("update \(size)", configuration: .init(setup: setup)) { benchmark in
            update(benchmark, size: size)
        }

        // Each iteration deletes one item that the iterations' setup added (not measured).
        Benchmark("delete \(size)", configuration: .init(setup: setup, teardown: cleanup)) { benchmark in
            let run = UUID().uuidString
            for index in benchmark.scaledIterations {
                benchmark.stopMeasurement()
                precondition(Fixture.addExtra("deleted-\(run)-\(index)") == errSecSuccess)
                benchmark.startMeasurement()
                precondition(SecItemDelete(Fixture.extraQuery("deleted-\(run)-\(index)") as CFDictionary) == errSecSuccess)
            }
        }
    }

    // Through the agent: the same look-up and update as a library client of a running keyhavend.
    for size in Fixture.sizes where AgentFixture.executable != nil {
        let setup: Benchmark.BenchmarkSetupHook = {
            try Fixture.use(items: size)
            try AgentFixture.shared.start()
        }
        let teardown: Benchmark.BenchmarkTeardownHook = { AgentFixture.shared.stop() }
        Benchmark("agent copy-matching \(size)", configuration: .init(setup: setup, teardown: teardown)) { benchmark in
            copyMatching(benchmark, size: size)
        }
        Benchmark("agent update \(size)", configuration: .init(setup: setup, teardown: teardown)) { benchmark in
            update(benchmark, size: size)
        }
    }

    // Unlock: the password's KDF (scrypt, calibrated to about a quarter second where the keychain
    // was made), then the class keys' unwrapping.
    nonisolated(unsafe) var locked: SecKeychain?
    Benchmark("unlock", configuration: .init(maxDuration: .seconds(5), maxIterations: 20, setup: {
        // A home of its own: creating a keychain adds it to the home's search list, which must
        // not change the fixtures' (their look-ups would search two keychains).
        let home = Fixture.folder + "/unlock"
        try? FileManager.default.removeItem(atPath: home)
        try FileManager.default.createDirectory(atPath: home, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        setenv("KEYHAVEN_AGENT", "off", 1)
        setenv("KEYHAVEN_HOME", home, 1)
        let path = home + "/unlock.keychain-db"
        let password = Array("bench password".utf8)
        guard SecKeychainCreate(path, UInt32(password.count), password, false, nil, &locked) == errSecSuccess else {
            throw Fixture.FixtureError(status: errSecIO)
        }
    })) { benchmark in
        let password = Array("bench password".utf8)
        for _ in benchmark.scaledIterations {
            precondition(SecKeychainLock(locked) == errSecSuccess)
            precondition(SecKeychainUnlock(locked, UInt32(password.count), password, true) == errSecSuccess)
        }
    }

    Benchmark("match-limit-all attributes 1000", configuration: .init(setup: { try Fixture.use(items: 1_000) })) { benchmark in
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: Fixture.service,
                                    kSecMatchLimit as String: kSecMatchLimitAll, kSecReturnAttributes as String: true]
        for _ in benchmark.scaledIterations {
            var result: CFTypeRef?
            precondition(SecItemCopyMatching(query as CFDictionary, &result) == errSecSuccess)
            blackHole(result)
        }
    }

    Benchmark("keyhaven string(forKey:) 1000", configuration: .init(setup: { try Fixture.use(items: 1_000) })) { benchmark in
        let keychain = Keychain(service: Fixture.service)
        for _ in benchmark.scaledIterations { blackHole(try? keychain.string(forKey: Fixture.account(500))) }
    }

    Benchmark("keyhaven set(_:forKey:) 1000", configuration: .init(setup: { try Fixture.use(items: 1_000) })) { benchmark in
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
