// A separate process for the multi-process tests: performs keychain operations on the keychain of
// $KEYHAVEN_HOME and reports on stdout. Not installed; tests run it from the build folder.
//
//   keyhaven-test-helper add PREFIX COUNT        adds PREFIX-0 ... PREFIX-(COUNT-1) (data = name)
//   keyhaven-test-helper read PREFIX COUNT       checks each item's data, prints "ok N"
//   keyhaven-test-helper churn PREFIX COUNT      add, update, read, delete each item in turn
//   keyhaven-test-helper fill PREFIX COUNT       limits file sizes (RLIMIT_FSIZE) to just above the
//                                                keychain's, then adds 64 KiB items until one fails,
//                                                then reads back every item it added;
//                                                prints "added N status S verified V"
//   keyhaven-test-helper fillfs PREFIX COUNT     the same without the limit (for a small file system)
//   keyhaven-test-helper groups - 0              prints the access groups from the environment
//   keyhaven-test-helper item OPERATION ACCOUNT  one SecItem call with the process's own groups
//                                                (ItemMode.swift)
//   keyhaven-test-helper exec-hold ACCOUNT PROGRAM  reads, then execs PROGRAM on the same connection
//                                                (ExecMode.swift)
//   keyhaven-test-helper wait SECONDS            sleeps, touching no keychain: a trusted program
//                                                that an attacker runs in its own place
//   keyhaven-test-helper wait-cloexec SECONDS    the same, after marking every descriptor it
//                                                inherited (past the standard three) close-on-exec,
//                                                as some programs do at start
//   keyhaven-test-helper script KEYCHAIN STEP... runs steps on one keychain file and prints each
//                                                step's OSStatus, space-separated. Steps:
//                                                unlock:PASSWORD, lock, read:ACCOUNT (data must
//                                                equal the account name), add:ACCOUNT:ACCESSIBILITY
//   keyhaven-test-helper stream RUN COUNT        the crash test's writer (StreamMode.swift)
//   keyhaven-test-helper listen SOCKET           a fake agent: prints "received N" per connection
//                                                (ListenMode.swift)
//   keyhaven-test-helper probe SOCKET            connects as the library does: "ok" or the error
//   keyhaven-test-helper stop SOCKET             asks the agent to stop: "stopped" or "refused ..."
//   keyhaven-test-helper backup SOCKET KEYCHAIN FILE PASSWORD
//                                                asks the agent for a backup: "backed up" or "refused ..."
//   keyhaven-test-helper tpm-sign TCTI PUBLIC PRIVATE AUTHORIZATION
//                                                signs a fixed digest on the TPM itself (no agent) with
//                                                the key blob's areas and authorization (hex): "signed N"
//                                                (the signature's bytes) or "refused ..." (TPMMode.swift)
//   keyhaven-test-helper reveal SOCKET KEYCHAIN PASSWORD
//                                                asks the agent, as Keychain Access does, for the first
//                                                generic password's secret: "revealed" or "refused ..."
//   keyhaven-test-helper model NAME THREADS OPERATIONS
//                                                the concurrency test's worker (ModelMode.swift)
//   keyhaven-test-helper keys PREFIX COUNT       adds stored P-256 keys, one acknowledgement a line
//   keyhaven-test-helper sign TAG MESSAGE        signs MESSAGE with the stored private key tagged TAG
//                                                (SignMode.swift)
import Foundation
import KeychainServices
import KeychainServicesExtras

let arguments = CommandLine.arguments
if arguments.count == 3, arguments[1] == "listen" { runListener(path: arguments[2]) }
if arguments.count == 3, arguments[1] == "probe" { runProbe(path: arguments[2]) }
if arguments.count == 3, arguments[1] == "stop" { runAgentRequest(path: arguments[2], .shutdown, done: "stopped") }
if arguments.count == 6, arguments[1] == "tpm-sign" {
    runTPMSign(tcti: arguments[2], publicArea: arguments[3], privateArea: arguments[4], authorization: arguments[5])
}
if arguments.count == 5, arguments[1] == "reveal" {
    runAgentRequest(path: arguments[2], .administer(keychain: arguments[3], reference: .rowID(.genericPassword, 1),
                                                    password: Data(arguments[4].utf8), action: .reveal), done: "revealed")
}
if arguments.count == 6, arguments[1] == "backup" {
    runAgentRequest(path: arguments[2], .backup(keychain: arguments[3], destination: arguments[4], password: Data(arguments[5].utf8)),
                    done: "backed up")
}
if arguments.count == 3, arguments[1] == "sync-status" { runAgentRequest(path: arguments[2], .syncStatus(staleAfter: 60), done: "answered") }
if arguments.count > 1, arguments[1] == "groups" {
    print((SecAccessGroupsGetCurrent() as? [String] ?? []).joined(separator: ","))
    exit(0)
}
if arguments.count == 4, arguments[1] == "sign" { runSignMode(tag: arguments[2], message: arguments[3]) }
if arguments.count == 4, arguments[1] == "item" { runItemMode(operation: arguments[2], account: arguments[3]) }
if arguments.count == 3, arguments[1] == "wait" || arguments[1] == "wait-cloexec", let seconds = UInt32(arguments[2]) {
    if arguments[1] == "wait-cloexec" {
        for descriptor in Int32(3)..<1024 where fcntl(descriptor, F_GETFD) >= 0 { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
    }
    sleep(seconds)
    exit(0)
}
if arguments.count == 4, arguments[1] == "exec-hold" { runExecHold(account: arguments[2], program: arguments[3]) }
if arguments.count == 4, arguments[1] == "adopt", let fd = Int32(arguments[2]) { runAdopt(fd: fd, account: arguments[3]) }
SecAccessGroupsSetCurrent(["multi.process.group"] as NSArray)
if arguments.count == 4, arguments[1] == "keys", let count = Int(arguments[3]) { runKeyMode(prefix: arguments[2], count: count) }
if arguments.count == 4, arguments[1] == "stream", let count = Int(arguments[3]) {
    runStream(run: arguments[2], count: count)
}
if arguments.count == 5, arguments[1] == "model", let threads = Int(arguments[3]), let operations = Int(arguments[4]) {
    runModel(name: arguments[2], threads: threads, operations: operations)
}
if arguments.count > 2, arguments[1] == "script" { runScript(keychainPath: arguments[2], steps: Array(arguments.dropFirst(3))) }
guard arguments.count == 4, let count = Int(arguments[3]) else {
    FileHandle.standardError.write(Data("usage: keyhaven-test-helper add|read|churn PREFIX COUNT\n".utf8))
    exit(2)
}
let (mode, prefix) = (arguments[1], arguments[2])

func query(_ account: String) -> [String: Any] {
    [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "multi", kSecAttrAccount as String: account]
}

func fail(_ what: String, _ status: OSStatus) -> Never {
    print("error \(what) \(status)")
    exit(1)
}

func read(_ account: String) -> Data? {
    var q = query(account)
    q[kSecReturnData as String] = true
    var result: CFTypeRef?
    let status = SecItemCopyMatching(q as CFDictionary, &result)
    if status == errSecItemNotFound { return nil }
    guard status == errSecSuccess else { fail("read \(account)", status) }
    return result as? Data
}

/// Adds items until the file-size limit makes one fail; reports how many were acknowledged.
func fill() -> Never {
    var seed = query("\(prefix)-seed")
    seed[kSecValueData as String] = Data("seed".utf8)
    guard SecItemAdd(seed as CFDictionary, nil) == errSecSuccess else { fail("seed", -1) }
    let home = ProcessInfo.processInfo.environment["KEYHAVEN_HOME"]!
    let sizes = ["", "-wal", "-shm"].compactMap {
        (try? FileManager.default.attributesOfItem(atPath: home + "/login.keychain-db" + $0))?[.size] as? Int
    }
    if mode == "fill" {
        signal(SIGXFSZ, SIG_IGN)
        var limit = rlimit(rlim_cur: rlim_t(sizes.max()! + 256 * 1024), rlim_max: rlim_t.max)
        setrlimit(Int32(RLIMIT_FSIZE.rawValue), &limit)
    }
    var added = 0, status = errSecSuccess
    while added < count {
        var item = query("\(prefix)-\(added)")
        item[kSecValueData as String] = Data(repeating: UInt8(added % 256), count: 64 * 1024)
        status = SecItemAdd(item as CFDictionary, nil)
        if status != errSecSuccess { break }
        added += 1
    }
    let verified = (0..<added).filter { read("\(prefix)-\($0)") == Data(repeating: UInt8($0 % 256), count: 64 * 1024) }.count
    print("added \(added) status \(status) verified \(verified)")
    exit(0)
}
if mode == "fill" || mode == "fillfs" { fill() }

var checked = 0
for i in 0..<count {
    let account = "\(prefix)-\(i)"
    switch mode {
    case "add":
        var item = query(account)
        item[kSecValueData as String] = Data(account.utf8)
        let status = SecItemAdd(item as CFDictionary, nil)
        guard status == errSecSuccess else { fail("add \(account)", status) }
    case "read":
        guard read(account) == Data(account.utf8) else { fail("wrong data for \(account)", -1) }
    case "churn":
        var item = query(account)
        item[kSecValueData as String] = Data("first".utf8)
        var status = SecItemAdd(item as CFDictionary, nil)
        guard status == errSecSuccess else { fail("add \(account)", status) }
        status = SecItemUpdate(query(account) as CFDictionary, [kSecValueData as String: Data("second".utf8)] as CFDictionary)
        guard status == errSecSuccess else { fail("update \(account)", status) }
        guard read(account) == Data("second".utf8) else { fail("wrong data after update \(account)", -1) }
        status = SecItemDelete(query(account) as CFDictionary)
        guard status == errSecSuccess else { fail("delete \(account)", status) }
    default:
        fail("unknown mode", -2)
    }
    checked += 1
}
print("ok \(checked)")

/// The `script` mode.
func runScript(keychainPath: String, steps: [String]) -> Never {
    var keychain: SecKeychain?
    _ = SecKeychainOpen(keychainPath, &keychain)
    var statuses: [OSStatus] = []
    for step in steps {
        let parts = step.split(separator: ":", maxSplits: 2).map(String.init)
        switch parts[0] {
        case "unlock":
            let password = Array(parts[1].utf8)
            statuses.append(SecKeychainUnlock(keychain, UInt32(password.count), password, true))
        case "lock":
            statuses.append(SecKeychainLock(keychain))
        case "read":
            let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: parts[1],
                                        kSecMatchSearchList as String: [keychain!], kSecReturnData as String: true]
            var result: CFTypeRef?
            let status = SecItemCopyMatching(query as CFDictionary, &result)
            statuses.append(status == errSecSuccess && result as? Data != Data(parts[1].utf8) ? -1 : status)
        case "add":
            let item: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrAccount as String: parts[1],
                                       kSecAttrAccessible as String: parts[2], kSecUseKeychain as String: keychain!,
                                       kSecValueData as String: Data(parts[1].utf8)]
            statuses.append(SecItemAdd(item as CFDictionary, nil))
        default:
            statuses.append(-2)
        }
    }
    print(statuses.map(String.init).joined(separator: " "))
    exit(0)
}
