// swift-tools-version:6.1
import PackageDescription

let strictSwift: [SwiftSetting] = [
    .swiftLanguageMode(.v6),
    .enableUpcomingFeature("ExistentialAny"),
]

// Where the keychain comes from. On Linux: Keyhaven's engine, and `KeychainServices` is Apple's API
// over it. On Apple platforms: Apple's own keychain; `KeychainServices` re-exports the Security
// framework and none of the engine is built (swift-crypto's model for CryptoKit). Every product
// exists on both, with the same name, so a cross-platform package names them unconditionally.
// KEYHAVEN_MANIFEST_PLATFORM=apple makes a Linux host take the Apple branch (the manifest tests
// check it; its sources need Apple's SDK to compile).
#if os(Linux)
let buildsEngine = Context.environment["KEYHAVEN_MANIFEST_PLATFORM"] != "apple"
#else
let buildsEngine = false
#endif

let products: [Product] = [
    .library(name: "KeychainServices", targets: ["KeychainServices"]),
    .library(name: "KeychainServicesExtras", targets: ["KeychainServicesExtras"]),
    .library(name: "Keyhaven", targets: ["Keyhaven"]),
    // Code written for Apple platforms says `import Security`. On Linux this product's module of
    // that name re-exports the mirror, so wrappers build without edits; on Apple platforms the
    // name belongs to Apple's framework, so the product is `KeychainServices`, which re-exports it.
    .library(name: "Security", targets: [buildsEngine ? "Security" : "KeychainServices"]),
    .executable(name: "keyhaven-example", targets: ["keyhaven-example"]),
]

/// The Apple branch: three small modules over Apple's Security framework (Sources/Apple).
let appleTargets: [Target] = [
    .target(name: "KeychainServices", path: "Sources/Apple/KeychainServices", swiftSettings: strictSwift),
    .target(name: "KeychainServicesExtras", dependencies: ["KeychainServices"], path: "Sources/Apple/KeychainServicesExtras",
            swiftSettings: strictSwift),
    .target(name: "Keyhaven", dependencies: ["KeychainServices"], swiftSettings: strictSwift),
    .executableTarget(name: "keyhaven-example", dependencies: ["KeychainServices"], swiftSettings: strictSwift),
]

let linuxTargets: [Target] = [
    // The system SQLite (Debian: libsqlite3-dev). Only KeychainStore/SQLite touches it.
    .systemLibrary(
        name: "CSQLite",
        pkgConfig: "sqlite3",
        providers: [.apt(["libsqlite3-dev"])]
    ),
    // A SQLite VFS that fails chosen I/O calls: the tests' fault injection (KeychainTestSupport's
    // SQLiteFaults), registered with the SQLite the engine shares; the engine does not link it.
    .target(
        name: "CSQLiteFaults",
        dependencies: ["CSQLite"]
    ),
    // libsystemd's sd-bus (Debian: libsystemd-dev), for the Secret Service provider's D-Bus connection.
    .systemLibrary(
        name: "CSystemdBus",
        pkgConfig: "libsystemd",
        providers: [.apt(["libsystemd-dev"])]
    ),
    // The system OpenSSL's libcrypto (Debian: libssl-dev), for PKCS#12 files only (KeychainKeys' PKCS12_openssl.swift).
    .systemLibrary(
        name: "COpenSSL",
        pkgConfig: "libcrypto",
        providers: [.apt(["libssl-dev"])]
    ),
    // libpwquality (Debian: libpwquality-dev), GNOME's password strength check and generator:
    // Keychain Access's New Password Item.
    .systemLibrary(
        name: "CPWQuality",
        pkgConfig: "pwquality",
        providers: [.apt(["libpwquality-dev"])]
    ),
    // tpm2-tss (Debian: libtss2-dev): ESAPI, its TCTI loader, error decoding and marshaling, for
    // the TPM as the Secure Enclave (KeyhavenTPM).
    .systemLibrary(
        name: "CTSS2",
        pkgConfig: "tss2-esys",
        providers: [.apt(["libtss2-dev"])]
    ),
    // Process hardening for the agent (not dumpable, no core file, freed memory overwritten) and
    // the kernel's answers about other processes (a socket's peer, a file system's type).
    // GTK 4 (Debian: libgtk-4-dev), for Keychain Access's window.
    .systemLibrary(name: "CGtk", pkgConfig: "gtk4", providers: [.apt(["libgtk-4-dev"])]),
    .target(name: "CHardening"),
    // The engine's plain types: errors, the item model, the keychain home, the wire format.
    // No crypto, no SQLite: the command and the agent client link only this.
    .target(
        name: "KeychainModel",
        swiftSettings: strictSwift
    ),
    // The engine: schema, encryption, keybag, SQLite. Package-internal.
    .target(
        name: "KeychainStore",
        dependencies: [
            "KeychainModel",
            "CHardening",
            "CSQLite",
            "COpenSSL",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "_CryptoExtras", package: "swift-crypto"),
        ],
        swiftSettings: strictSwift
    ),
    // Asymmetric keys: generation, Apple's representations, sign/verify, encrypt/decrypt, key
    // exchange, ECIES (swift-crypto and _CryptoExtras). Used by the mirror and by the agent.
    .target(
        name: "KeychainKeys",
        dependencies: [
            "KeychainModel",
            "COpenSSL",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "_CryptoExtras", package: "swift-crypto"),
            .product(name: "SwiftASN1", package: "swift-asn1"),
        ],
        swiftSettings: strictSwift
    ),
    // The mirror of Apple's Keychain Services: Apple's names and signatures only.
    .target(
        name: "KeychainServices",
        dependencies: ["KeychainStore", "KeychainKeys", "KeyhavenAgentClient"],
        swiftSettings: strictSwift
    ),
    // Linux-only additions: the caller's access groups, the keychain home.
    .target(
        name: "KeychainServicesExtras",
        dependencies: ["KeychainServices", "KeychainStore"],
        swiftSettings: strictSwift
    ),
    // The Swift API (SAMKeychain's and FXKeychain's shapes). Imports only KeychainServices, so it
    // would build unchanged against Apple's Security framework.
    .target(
        name: "Keyhaven",
        dependencies: ["KeychainServices"],
        swiftSettings: strictSwift
    ),
    // The SSH agent protocol (RFC 9987 and OpenSSH's extensions): its wire encoding, requests and
    // replies (docs/architecture.md).
    .target(
        name: "KeyhavenSSHAgent",
        dependencies: ["KeychainModel", .product(name: "Crypto", package: "swift-crypto"),
                       .product(name: "_CryptoExtras", package: "swift-crypto"), .product(name: "SwiftASN1", package: "swift-asn1")],
        swiftSettings: strictSwift
    ),
    // The agent protocol and its blocking client (no event loop: the command starts fast).
    .target(
        name: "KeyhavenAgentClient",
        dependencies: ["KeychainModel"],
        swiftSettings: strictSwift
    ),
    // Sync's rules, with no I/O, shared by devices and the server (docs/sync.md): log entries and
    // their verification, sealed records, view keys and key shares, request signatures, the wire
    // messages, the hybrid clock and the merge of record versions. swift-crypto only.
    .target(
        name: "KeyhavenSyncCore",
        dependencies: ["KeychainModel", .product(name: "Crypto", package: "swift-crypto")],
        swiftSettings: strictSwift
    ),
    // The sync server's store and service: the log on PostgreSQL (postgres-nio), served over
    // HTTP by Hummingbird, its services run and stopped by swift-service-lifecycle, measured
    // through swift-metrics for Prometheus (swift-prometheus).
    .target(
        name: "KeyhavenSyncServer",
        dependencies: [
            "KeyhavenSyncCore",
            "KeychainModel",
            "CHardening",
            .product(name: "PostgresNIO", package: "postgres-nio"),
            .product(name: "Logging", package: "swift-log"),
            .product(name: "Hummingbird", package: "hummingbird"),
            .product(name: "HummingbirdCore", package: "hummingbird"),
            .product(name: "HummingbirdTLS", package: "hummingbird"),
            .product(name: "HTTPTypes", package: "swift-http-types"),
            .product(name: "NIOSSL", package: "swift-nio-ssl"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
            .product(name: "ServiceLifecycle", package: "swift-service-lifecycle"),
            .product(name: "Metrics", package: "swift-metrics"),
            .product(name: "Prometheus", package: "swift-prometheus"),
            .product(name: "NIOCore", package: "swift-nio"),
            .product(name: "NIOPosix", package: "swift-nio"),
        ],
        swiftSettings: strictSwift
    ),
    // The device side of sync, on its keychain: the server's client, rounds (pull, verify, merge,
    // apply, push), the background loop, the device's state, pairing and recovery.
    .target(
        name: "KeyhavenSyncDevice",
        dependencies: ["KeyhavenSyncCore", "KeychainStore", "KeychainModel", "KeyhavenAgentClient",
                       .product(name: "Crypto", package: "swift-crypto"),
                       .product(name: "AsyncHTTPClient", package: "async-http-client")],
        swiftSettings: strictSwift
    ),
    // The work of `keyhaven sync ...` (messages, JSON, exit statuses) over the device side; apart
    // from it so that the agent, which runs the device side too, links no command-line code.
    .target(
        name: "KeyhavenSyncCommands",
        dependencies: ["KeyhavenCLI", "KeyhavenSyncDevice", "KeyhavenSyncCore", "KeychainStore", "KeychainModel", "KeyhavenAgentClient",
                       .product(name: "ArgumentParser", package: "swift-argument-parser")],
        swiftSettings: strictSwift
    ),
    // Load on a running sync server (scripts/bench-sync.sh; docs/benchmarks.md). Not a product.
    .executableTarget(
        name: "keyhaven-sync-bench",
        dependencies: ["KeyhavenSyncDevice", "KeyhavenSyncCore", .product(name: "AsyncHTTPClient", package: "async-http-client")],
        path: "Tools/keyhaven-sync-bench",
        swiftSettings: strictSwift
    ),
    // What a SecItem call costs through keyhavend against in process (scripts/bench-agent.sh).
    .executableTarget(
        name: "keyhaven-agent-bench",
        dependencies: ["KeychainServices", "KeychainStore", "KeyhavenAgentClient", "KeychainModel"],
        path: "Tools/keyhaven-agent-bench",
        swiftSettings: strictSwift
    ),
    // `keyhaven sync ...`, which keyhaven runs in its place (as keyhaven-pki).
    .executableTarget(
        name: "keyhaven-sync",
        dependencies: ["KeyhavenCLI", "KeyhavenSyncCommands"],
        swiftSettings: strictSwift
    ),
    .executableTarget(
        name: "keyhaven-sync-server",
        dependencies: ["KeyhavenSyncServer"],
        swiftSettings: strictSwift
    ),
    // The agent: holds unlocked keychains for a user's processes, on a Unix socket (SwiftNIO).
    .target(
        name: "KeyhavenAgent",
        dependencies: [
            "KeychainStore", "KeychainKeys", "KeychainModel", "KeyhavenAgentClient", "KeyhavenSSHAgent", "KeyhavenTPM", "KeyhavenDBus",
            "CHardening", .product(name: "Crypto", package: "swift-crypto"),
        ],
        swiftSettings: strictSwift
    ),
    // D-Bus through sd-bus (libsystemd): a connection served by one thread, calls, values and
    // signals. The Secret Service provider and the importer's client both use it.
    .target(
        name: "KeyhavenDBus",
        dependencies: ["KeychainModel", "CSystemdBus"],
        swiftSettings: strictSwift
    ),
    // What the Secret Service's provider and its clients share: its names, the sessions secrets
    // cross the bus in (plain, and Diffie-Hellman with OpenSSL), and how an item is a keychain item.
    .target(
        name: "KeyhavenSecretServiceCore",
        dependencies: [
            "KeychainModel", "KeyhavenDBus", "COpenSSL",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "_CryptoExtras", package: "swift-crypto"),
        ],
        swiftSettings: strictSwift
    ),
    // The Secret Service provider (org.freedesktop.secrets) over the agent's keychains.
    .target(
        name: "KeyhavenSecretService",
        dependencies: ["KeyhavenAgent", "KeyhavenAgentClient", "KeyhavenDBus", "KeyhavenSecretServiceCore", "KeychainStore", "KeychainModel",
                       .product(name: "Crypto", package: "swift-crypto")],
        swiftSettings: strictSwift
    ),
    // The TPM as the Secure Enclave: the agent's connection through tpm2-tss (ESAPI).
    .target(
        name: "KeyhavenTPM",
        dependencies: ["CTSS2", "KeychainModel"],
        swiftSettings: strictSwift
    ),
    // The agent following the user's session in logind: the screen's lock, sleep, idle time.
    .target(
        name: "KeyhavenSession",
        dependencies: ["KeyhavenDBus", "KeychainStore", "KeychainModel"],
        swiftSettings: strictSwift
    ),
    .executableTarget(
        name: "keyhavend",
        dependencies: ["KeyhavenAgent", "KeyhavenAgentClient", "KeyhavenSecretService", "KeyhavenSession", "KeyhavenSyncDevice", "KeychainStore",
                       "KeychainModel", "KeyhavenDBus", "KeyhavenSecretServiceCore",
                       .product(name: "ArgumentParser", package: "swift-argument-parser")],
        swiftSettings: strictSwift
    ),
    // The command, macOS security(1)'s subcommands over the agent. It links no X.509, PKCS#12 or
    // key-encoding library: the certificate and key subcommands' work is keyhaven-pki's.
    .target(
        name: "KeyhavenCLI",
        dependencies: [
            "KeychainModel", "KeyhavenAgentClient",
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ],
        swiftSettings: strictSwift
    ),
    .executableTarget(
        name: "keyhaven",
        dependencies: ["KeyhavenCLI"],
        swiftSettings: strictSwift
    ),
    // Keychain Access for Linux without its window: the agent session, the items list's rows,
    // categories, search and sorting, keychain and item commands, password strength (the window
    // draws what these say).
    .target(
        name: "KeychainAccessCore",
        dependencies: ["CPWQuality", "KeyhavenAgentClient", "KeyhavenSSHAgent", "KeychainKeys", "KeychainModel", "KeychainStore"],
        swiftSettings: strictSwift
    ),
    // Keychain Access for Linux: the window (GTK calls only; the logic is KeychainAccessCore's).
    .executableTarget(
        name: "keyhaven-access",
        dependencies: ["CGtk", "KeychainAccessCore", "KeychainModel"],
        swiftSettings: strictSwift
    ),
    // OpenSSH's ssh-agent command line over keyhavend, which holds the keys and serves each
    // client's socket handed to it (docs/ssh.md).
    .executableTarget(
        name: "keyhaven-ssh-agent",
        dependencies: ["CHardening", "KeychainModel", "KeyhavenAgentClient"],
        swiftSettings: strictSwift
    ),
    // git's credential helper over the agent (as git-credential-osxkeychain on a Mac).
    .executableTarget(
        name: "git-credential-keyhaven",
        dependencies: ["KeyhavenCLI", .product(name: "ArgumentParser", package: "swift-argument-parser")],
        swiftSettings: strictSwift
    ),
    // The work of the certificate and key subcommands (import, export, find-certificate, ...),
    // which `keyhaven` runs in its place (docs/benchmarks.md: why).
    .target(
        name: "KeyhavenPKI",
        dependencies: [
            "KeyhavenCLI", "KeychainModel", "KeyhavenAgentClient", "KeychainKeys", "KeyhavenSSHAgent",
            .product(name: "Crypto", package: "swift-crypto"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ],
        swiftSettings: strictSwift
    ),
    // `import-secrets`: password exports (CSV), a pass store, and another Secret Service provider
    // read through D-Bus; run by keyhaven-pki.
    .target(
        name: "KeyhavenImport",
        dependencies: [
            "KeyhavenCLI", "KeychainModel", "KeyhavenAgentClient", "KeyhavenDBus", "KeyhavenSecretServiceCore", "KeyhavenSSHAgent",
            .product(name: "SwiftCSV", package: "SwiftCSV"),
            .product(name: "ArgumentParser", package: "swift-argument-parser"),
        ],
        swiftSettings: strictSwift
    ),
    .executableTarget(
        name: "keyhaven-pki",
        dependencies: ["KeyhavenCLI", "KeyhavenPKI", "KeyhavenImport"],
        swiftSettings: strictSwift
    ),
    .executableTarget(
        name: "keyhaven-example",
        dependencies: ["KeychainServices"],
        swiftSettings: strictSwift
    ),
    // Driven by the multi-process tests: performs keychain operations in a separate process.
    .executableTarget(
        name: "keyhaven-test-helper",
        dependencies: ["KeychainServices", "KeychainServicesExtras", "KeychainModel", "KeyhavenAgentClient", "KeyhavenTPM"],
        path: "Tools/keyhaven-test-helper",
        swiftSettings: strictSwift
    ),
    // libFuzzer targets (scripts/fuzz.sh); a normal build replays saved inputs.
    .executableTarget(
        name: "keyhaven-fuzz",
        dependencies: ["KeychainServices", "KeychainStore", "KeychainKeys", "KeyhavenAgentClient", "KeyhavenSyncCore", "KeyhavenSSHAgent",
                       .product(name: "Crypto", package: "swift-crypto")],
        path: "Tools/keyhaven-fuzz",
        swiftSettings: strictSwift
    ),
    // Shared by the test targets: a fresh keychain home per test, one test at a time.
    .target(
        name: "KeychainTestSupport",
        dependencies: ["KeychainStore", "KeychainServicesExtras", "KeychainModel", "CSQLite", "CSQLiteFaults"],
        path: "Tests/KeychainTestSupport",
        swiftSettings: strictSwift
    ),
    // The command end to end: the built `keyhaven` and its helpers against a real agent.
    .testTarget(
        name: "KeyhavenCLITests",
        dependencies: ["KeychainStore", "KeyhavenAgentClient", "KeyhavenCLI", "KeychainTestSupport", "keyhaven", "keyhaven-pki", "keyhavend",
                       "git-credential-keyhaven", .product(name: "ArgumentParser", package: "swift-argument-parser")],
        swiftSettings: strictSwift
    ),
    // The agent's protocol and client: the messages' encoding, framing, reading answers.
    .testTarget(
        name: "KeyhavenAgentClientTests",
        dependencies: ["KeyhavenAgentClient", "KeychainModel", "KeychainStore", "KeychainTestSupport"],
        swiftSettings: strictSwift
    ),
    // The agent: its connections, identification of programs, access checks and
    // prompts, attacks by the user's other programs and by other users.
    .testTarget(
        name: "KeyhavenAgentTests",
        dependencies: ["KeychainStore", "KeyhavenAgentClient", "KeyhavenAgent", "KeychainTestSupport", "keyhaven", "keyhaven-pki", "keyhavend",
                       "keyhaven-sync", "keyhaven-test-helper", "keyhaven-ssh-agent"],
        swiftSettings: strictSwift
    ),
    // The Secret Service provider with real clients on a private session bus.
    .testTarget(
        name: "KeyhavenSecretServiceTests",
        dependencies: ["KeychainStore", "KeyhavenAgentClient", "KeyhavenSecretService", "KeychainTestSupport", "keyhaven", "keyhaven-pki", "keyhavend"],
        exclude: ["seahorse.py"],
        swiftSettings: strictSwift
    ),
    // Secret Service sessions' cryptography and the item mapping, without a bus.
    .testTarget(
        name: "KeyhavenSecretServiceCoreTests",
        dependencies: ["KeyhavenSecretServiceCore", "KeyhavenDBus", "KeychainModel"],
        swiftSettings: strictSwift
    ),
    // Keychain Access's logic against a real agent, without a display.
    .testTarget(
        name: "KeychainAccessCoreTests",
        dependencies: ["KeychainAccessCore", "KeychainModel", "KeyhavenAgentClient", "KeyhavenSSHAgent", "KeychainTestSupport", "keyhaven", "keyhaven-pki", "keyhaven-sync", "keyhavend",
                       "keyhaven-access", "keyhaven-sync-server"],
        swiftSettings: strictSwift
    ),
    // The TPM through the agent, against swtpm.
    .testTarget(
        name: "KeyhavenTPMTests",
        dependencies: ["KeyhavenTPM", "KeychainStore", "KeyhavenAgentClient", "KeychainServices", "KeychainTestSupport", "keyhaven", "keyhavend"],
        swiftSettings: strictSwift
    ),
    // Keychain Access's window under Xvfb, driven through AT-SPI.
    .testTarget(
        name: "KeychainAccessWindowTests",
        dependencies: ["KeychainTestSupport", "keyhaven", "keyhavend", "keyhaven-access"],
        exclude: ["driver.py", "clipwatch.c"],
        swiftSettings: strictSwift
    ),
    // The agent following the session, with logind mocked on a private system bus.
    .testTarget(
        name: "KeyhavenSessionTests",
        dependencies: ["KeychainTestSupport", "keyhaven", "keyhavend", "keyhaven-test-helper"],
        swiftSettings: strictSwift
    ),
    // The D-Bus binding against a dbus-daemon of the test's own.
    .testTarget(
        name: "KeyhavenDBusTests",
        dependencies: ["KeyhavenDBus", "KeychainModel", "KeychainTestSupport"],
        swiftSettings: strictSwift
    ),
    // The certificate and key subcommands through the command, against OpenSSL's files.
    .testTarget(
        name: "KeyhavenPKITests",
        dependencies: ["KeychainStore", "KeychainTestSupport", "keyhaven", "keyhaven-pki", "keyhavend"],
        swiftSettings: strictSwift
    ),
    // `import-secrets` against what the real tools made.
    .testTarget(
        name: "KeyhavenImportTests",
        dependencies: ["KeychainTestSupport", "keyhaven", "keyhaven-pki", "keyhavend"],
        swiftSettings: strictSwift
    ),
    // What is installed beside the programs: scripts/install and the PAM module.
    .testTarget(
        name: "InstallationTests",
        dependencies: ["KeychainTestSupport", "keyhaven", "keyhaven-pki", "keyhavend", "keyhaven-sync", "keyhaven-ssh-agent",
                       "git-credential-keyhaven", "keyhaven-access", "keyhaven-sync-server"],
        swiftSettings: strictSwift
    ),
    .testTarget(
        name: "KeyhavenTests",
        dependencies: ["Keyhaven", "KeychainServices", "KeychainServicesExtras", "KeychainTestSupport"],
        swiftSettings: strictSwift
    ),
    .testTarget(
        name: "KeychainModelTests",
        dependencies: ["KeychainModel", "KeychainTestSupport"],
        swiftSettings: strictSwift
    ),
    .testTarget(
        name: "KeyhavenSSHAgentTests",
        dependencies: ["KeyhavenSSHAgent", "KeychainTestSupport", "keyhaven-ssh-agent", "keyhavend", .product(name: "Crypto", package: "swift-crypto"),
                       .product(name: "_CryptoExtras", package: "swift-crypto")],
        swiftSettings: strictSwift
    ),
    .testTarget(
        name: "KeychainStoreTests",
        dependencies: ["KeychainStore", "KeychainTestSupport", .product(name: "Crypto", package: "swift-crypto"),
                       .product(name: "_CryptoExtras", package: "swift-crypto")],
        swiftSettings: strictSwift
    ),
    // The Linux-only calls: access groups a process declares, password change, backup, presence reuse.
    .testTarget(
        name: "KeychainServicesExtrasTests",
        dependencies: ["KeychainServices", "KeychainServicesExtras", "KeychainStore", "KeychainTestSupport"],
        swiftSettings: strictSwift
    ),
    // Keys, certificates and their files, called directly and checked against OpenSSL.
    .testTarget(
        name: "KeychainKeysTests",
        dependencies: ["KeychainKeys", "KeychainTestSupport", .product(name: "Crypto", package: "swift-crypto")],
        swiftSettings: strictSwift
    ),
    .testTarget(
        name: "KeychainServicesTests",
        dependencies: ["KeychainServices", "KeychainServicesExtras", "KeychainStore", "KeychainTestSupport", "keyhaven-test-helper",
                       "keyhavend", "Security", "KeychainKeys", .product(name: "Crypto", package: "swift-crypto")],
        swiftSettings: strictSwift
    ),
    // Calls Apple's functions the way wrapper code does; warnings are errors here, so a status
    // that could not be discarded (C imports allow it) fails the build.
    .testTarget(
        name: "WrapperStyleTests",
        dependencies: ["KeychainServices", "KeychainServicesExtras", "KeychainTestSupport"],
        swiftSettings: strictSwift + [.unsafeFlags(["-warnings-as-errors"])]
    ),
    // Crashes, concurrency and tampering (docs/reliability.md); KEYHAVEN_RELIABILITY=full for the long runs.
    .testTarget(
        name: "ReliabilityTests",
        dependencies: ["KeychainServices", "KeychainServicesExtras", "KeychainStore", "KeychainTestSupport", "keyhaven-test-helper",
                       "keyhaven-fuzz"],
        swiftSettings: strictSwift
    ),
    .testTarget(
        name: "KeyhavenSyncServerTests",
        dependencies: ["KeyhavenSyncServer", "KeyhavenSyncCore", "KeyhavenSyncDevice", "KeychainTestSupport",
                       "keyhaven-sync-server",
                       .product(name: "PostgresNIO", package: "postgres-nio"), .product(name: "Logging", package: "swift-log"),
                       .product(name: "AsyncHTTPClient", package: "async-http-client"), .product(name: "NIOSSL", package: "swift-nio-ssl")],
        swiftSettings: strictSwift
    ),
    // Devices driven by the `keyhaven sync` command against a real server on PostgreSQL, honest
    // and hostile.
    .testTarget(
        name: "KeyhavenSyncDeviceTests",
        dependencies: ["KeyhavenSyncDevice", "KeyhavenSyncCore", "KeychainTestSupport", "KeychainStore", "KeychainModel",
                       "keyhaven-sync-server", "keyhaven", "keyhaven-sync",
                       .product(name: "AsyncHTTPClient", package: "async-http-client"),
                       .product(name: "Hummingbird", package: "hummingbird"),
                       .product(name: "PropertyBased", package: "swift-property-based")],
        swiftSettings: strictSwift
    ),
    // The `sync` subcommands' messages, exit statuses and output.
    .testTarget(
        name: "KeyhavenSyncCommandsTests",
        dependencies: ["KeychainTestSupport", "keyhaven-sync-server", "keyhaven", "keyhaven-sync"],
        swiftSettings: strictSwift
    ),
    .testTarget(
        name: "KeyhavenSyncCoreTests",
        dependencies: ["KeyhavenSyncCore", "KeychainModel", .product(name: "Crypto", package: "swift-crypto"),
                       .product(name: "PropertyBased", package: "swift-property-based")],
        swiftSettings: strictSwift
    ),
    // `import Security` on Linux: the mirror under the name Apple-platform code uses.
    .target(name: "Security", dependencies: ["KeychainServices"], swiftSettings: strictSwift),
    // The manifest's promise: every product on every platform, and the porting guide's recipe.
    .testTarget(
        name: "PortingRecipeTests",
        dependencies: ["Security", "KeychainServicesExtras", "KeychainTestSupport"],
        swiftSettings: strictSwift
    ),
]

let package = Package(
    name: "keyhaven",
    // The sync server is Linux's (a server for the keychains of Linux machines): no Apple branch.
    products: products + (buildsEngine ? [.executable(name: "keyhaven-sync-server", targets: ["keyhaven-sync-server"])] : []),
    dependencies: buildsEngine ? [
        .package(url: "https://github.com/apple/swift-crypto.git", "3.12.3"..<"5.0.0"),
        .package(url: "https://github.com/apple/swift-asn1.git", from: "1.7.4"),
        .package(url: "https://github.com/apple/swift-argument-parser.git", from: "1.5.0"),
        .package(url: "https://github.com/x-sheep/swift-property-based.git", from: "2.0.1"),
        .package(url: "https://github.com/vapor/postgres-nio.git", from: "1.33.2"),
        .package(url: "https://github.com/apple/swift-log.git", from: "1.16.2"),
        .package(url: "https://github.com/hummingbird-project/hummingbird.git", from: "2.28.1"),
        .package(url: "https://github.com/apple/swift-http-types.git", from: "1.8.0"),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio-ssl.git", from: "2.37.6"),
        .package(url: "https://github.com/swiftcsv/SwiftCSV.git", from: "0.10.0"),
        .package(url: "https://github.com/swift-server/swift-service-lifecycle.git", from: "2.13.0"),
        .package(url: "https://github.com/apple/swift-metrics.git", from: "2.13.0"),
        .package(url: "https://github.com/swift-server/swift-prometheus.git", from: "2.4.1"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.101.2"),
    ] : [],
    targets: buildsEngine ? linuxTargets : appleTargets
)
