import ArgumentParser

/// A `sync` subcommand. Its options live here, so `keyhaven` parses and documents it; its work
/// (HTTP, the sync engine) lives in `keyhaven-sync`, installed beside `keyhaven`, which `keyhaven`
/// runs in its place, as it runs `keyhaven-pki` for the certificate subcommands.
package protocol SyncSubcommand: HelperCommand {}

extension SyncSubcommand {
    package func run() throws { try HelperDispatch.run(self, executable: "keyhaven-sync") }
}

/// `keyhaven sync`: this keychain home's synchronizable items, end to end encrypted, on every
/// machine of the user, through a keyhaven-sync-server.
package struct SyncCommand: ParsableCommand {
    package static let configuration = CommandConfiguration(
        commandName: "sync", abstract: "Sync synchronizable items with your other machines, end to end encrypted.",
        discussion: """
            Items added with kSecAttrSynchronizable and an accessibility that may leave the machine \
            (WhenUnlocked, AfterFirstUnlock, Always) sync through a keyhaven-sync-server, which sees \
            ciphertext only. The server is https://HOST[:PORT], or http:// to a loopback address. \
            Exit status: 0 when in step; otherwise the OSStatus's low byte and a message.
            """,
        subcommands: [SyncCreate.self, SyncInvite.self, SyncJoin.self, SyncNow.self, SyncStatus.self, SyncDevices.self, SyncRemoveDevice.self, SyncRecover.self,
                      SyncRotateRecoveryKey.self, SyncVerify.self, SyncLeave.self]
    ).underKeyhaven

    package init() {}
}

/// The server and this device's name, as `create`, `join` and `recover` take them.
package struct SyncDeviceOptions: ParsableArguments {
    @Option(help: "The sync server: https://HOST[:PORT], or http:// to a loopback address.") package var server: String
    @Option(help: "This device's name, as other devices list it (default: the host name).") package var name: String?
    package init() {}
}

/// `keyhaven sync create --server URL [--name NAME]`.
package struct SyncCreate: SyncSubcommand {
    package static let configuration = CommandConfiguration(
        commandName: "create", abstract: "Create a sync account with this machine as its first device; print the recovery key once.",
        discussion: "The recovery key is printed once, on a line \"Recovery key: KEY\". Keep it offline: with it, a machine that lost everything gets the items back.")
    @OptionGroup package var device: SyncDeviceOptions
    package init() {}
}

/// `keyhaven sync invite [--timeout SECONDS]`.
package struct SyncInvite: SyncSubcommand {
    package static let configuration = CommandConfiguration(
        commandName: "invite", abstract: "Print a one-time pairing code, then wait for a new device to join with it and add it.",
        discussion: "The code is the first line of standard output, alone, written at once (also to a pipe or a file). It carries 160 random bits; the server that relays the pairing sees the 32 that name its relay slot, never the other 128, so it can neither read the code nor put its own device in the new one's place. Exit 0 once the device is added.")
    @Option(help: "How long to wait for the new device, in seconds.") package var timeout: Int = 600
    package func validate() throws {
        guard timeout > 0 else { throw ValidationError("--timeout is a number of seconds above 0") }
    }
    package init() {}
}

/// `keyhaven sync join --server URL --code CODE [--name NAME]`.
package struct SyncJoin: SyncSubcommand {
    package static let configuration = CommandConfiguration(
        commandName: "join", abstract: "Join a sync account with the code `keyhaven sync invite` printed on a device already on it.")
    @OptionGroup package var device: SyncDeviceOptions
    @Option(help: "The pairing code.") package var code: String
    package init() {}
}

/// `keyhaven sync now`.
package struct SyncNow: SyncSubcommand {
    package static let configuration = CommandConfiguration(
        commandName: "now", abstract: "Push and pull until this machine and the server are in step.",
        discussion: """
            Exit 0 when in step; non-zero with a message when the server cannot be reached or what it sent does not verify \
            (nothing of it is applied). With the agent running, the round runs in it, on the keychain it holds unlocked: \
            no password is asked again.
            """)
    package init() {}
}

/// `keyhaven sync status [--json] [--stale-after SECONDS]`.
package struct SyncStatus: SyncSubcommand {
    package static let configuration = CommandConfiguration(
        commandName: "status", abstract: "Show whether this machine syncs, with which server and account, and where it is in the log.",
        discussion: """
            Also names the refusal the last round ended in (as "fork detected"), and warns about each device not heard \
            from for longer than --stale-after: every device signs a heartbeat into the log now and then, so a device \
            whose heartbeats stop coming is offline, or the server withholds its entries. --json: one object with \
            "syncing", "removed", "refusal" (null or {"name", "message"}) and "staleDevices". With the agent running, it \
            answers.
            """)
    @Flag(help: "One JSON object.") package var json = false
    @Option(name: .customLong("stale-after"), help: "Warn about a device whose last heartbeat is older than this, in seconds.")
    package var staleAfter: Int = 7 * 86_400
    package func validate() throws {
        guard staleAfter > 0 else { throw ValidationError("--stale-after is a number of seconds above 0") }
    }
    package init() {}
}

/// `keyhaven sync verify [--at POSITION] [--json]`.
package struct SyncVerify: SyncSubcommand {
    package static let configuration = CommandConfiguration(
        commandName: "verify", abstract: "Sync, then print a short fingerprint of the verified head, to compare between devices.",
        discussion: """
            Two devices that print different fingerprints for the same position were shown different histories by the \
            server (a fork): stop using that server. A device further along prints a later position: run \
            `keyhaven sync verify --at POSITION` on it with the other's position. Exit non-zero, naming the refusal, \
            when what the server sends does not verify.
            """)
    @Option(help: "The position in the log to print the fingerprint of (default: the verified head).") package var at: UInt64?
    @Flag(help: "Print what is verified here without syncing first.") package var offline = false
    @Flag(help: "One JSON object: \"sequence\" and \"fingerprint\".") package var json = false
    package init() {}
}

/// `keyhaven sync rotate-recovery-key`.
package struct SyncRotateRecoveryKey: SyncSubcommand {
    package static let configuration = CommandConfiguration(
        commandName: "rotate-recovery-key", abstract: "Replace the recovery key: print the new one once; the old one opens nothing new.",
        discussion: "The old key's pseudo-device is removed and the account's keys are rotated in the same push: the server refuses the old key, and nothing written from then on opens with it. The new key is printed on a line \"Recovery key: KEY\".")
    package init() {}
}

/// `keyhaven sync devices [--json]`.
package struct SyncDevices: SyncSubcommand {
    package static let configuration = CommandConfiguration(
        commandName: "devices", abstract: "List the account's devices: id, name, added by, last seen.",
        discussion: "As the log verified here says (sync now first for the newest); with the agent running, it answers. --json: an array of objects with \"id\", \"name\", \"addedBy\", \"lastSeen\", \"active\", \"thisDevice\".")
    @Flag(help: "A JSON array.") package var json = false
    package init() {}
}

/// `keyhaven sync remove-device ID`.
package struct SyncRemoveDevice: SyncSubcommand {
    package static let configuration = CommandConfiguration(
        commandName: "remove-device", abstract: "Remove a device from the account: it can no longer pull or push.",
        discussion: "ID is the device's id as `keyhaven sync devices` shows it. What the device already had stays on it: change those passwords.")
    @Argument(help: "The device's id (32 hexadecimal digits).") package var id: String
    package func validate() throws {
        guard id.count == 32, id.allSatisfy(\.isHexDigit) else { throw ValidationError("a device id is 32 hexadecimal digits") }
    }
    package init() {}
}

/// `keyhaven sync recover --server URL --recovery-key KEY [--name NAME]`.
package struct SyncRecover: SyncSubcommand {
    package static let configuration = CommandConfiguration(
        commandName: "recover", abstract: "On a machine that lost everything: join the account with its recovery key.",
        discussion: "KEY is what `keyhaven sync create` printed after \"Recovery key:\" (dashes, spaces and case do not matter). Give - to read it from standard input.")
    @OptionGroup package var device: SyncDeviceOptions
    @Option(name: .customLong("recovery-key"), help: "The recovery key, or - to read it from standard input.") package var recoveryKey: String
    package init() {}
}

/// `keyhaven sync leave`.
package struct SyncLeave: SyncSubcommand {
    package static let configuration = CommandConfiguration(
        commandName: "leave", abstract: "Stop syncing here: forget the account and this device's sync keys; the items stay.")
    package init() {}
}
