import Foundation
import KeychainModel
import KeyhavenAgentClient
import KeychainTestSupport
import Testing

/// The agent protocol's binary encoding: every request and response survives a round trip, and
/// no input, however damaged, does more than fail with an error.
struct AgentProtocolTests {
    static let item = StoredItem(
        itemClass: .internetPassword, rowID: 42, persistentReference: .uuid(.internetPassword, Data(repeating: 7, count: 16)),
        isTombstone: false,
        attributes: ["acct": .string("ann ✓"), "gena": .data(Data([0, 255])), "port": .number(-443),
                     "cdat": .date(Date(timeIntervalSinceReferenceDate: 12.5))],
        accessControlFlags: 1 << 40, secret: Data("s3cret".utf8), access: access)

    static let access = ItemAccess(applications: [TrustedApplication(path: "/usr/bin/ssh", digest: Data(repeating: 3, count: 32)), .caller],
                                   descriptor: "mail ✓")

    static var query: ItemQuery {
        var query = ItemQuery(itemClass: .genericPassword)
        query.criteria = ["svce": .string("svc"), "sync": .number(1)]
        query.matchAnySynchronizable = true
        query.tombstone = false
        query.persistentReference = .rowID(.genericPassword, 9)
        query.limit = nil
        query.hostOrSubdomain = "example.com"
        return query
    }

    static var keyOperation: KeyOperationRequest {
        var request = KeyOperationRequest(.keyExchange, reference: .uuid(.key, Data(repeating: 9, count: 16)))
        request.algorithm = "algid:keyexchange:ECDH:KDFX963:SHA256"
        request.input = Data([1, 2])
        request.peerPublicKey = Data([4, 5, 6])
        request.peerKeyType = 73
        request.requestedSize = 32
        request.sharedInfo = Data("info".utf8)
        return request
    }

    static var requests: [AgentRequest] {
        var changes = ItemChanges()
        changes.attributes = ["labl": .string("new")]
        changes.secret = Data()
        changes.access = ItemAccess(anyApplication: true)
        var caller = Caller(accessGroups: ["a", "*"], interactionAllowed: false)
        caller.skipsUntrusted = true
        let item = NewItem(itemClass: .genericPassword, attributes: ["acct": .string("a")], secret: Data("x".utf8), accessControlFlags: 3,
                           access: access)
        return [
            .hello, .create(keychain: "/k", password: nil), .create(keychain: "/k", password: Data("pw".utf8)),
            .deleteKeychain(keychain: "/k"), .unlock(keychain: "/k", password: Data()), .lock(keychain: nil), .lock(keychain: "/k"),
            .status(keychain: "/k"), .changePassword(keychain: "/k", old: Data("o".utf8), new: Data("n".utf8)),
            .settings(keychain: "/k"), .setSettings(keychain: "/k", settings: LockSettings(lockOnSleep: true, useLockInterval: true, lockInterval: 7)),
            .add(keychain: "/k", item: item, caller: caller),
            .find(keychains: ["/a", "/b"], query: query, caller: caller, withSecrets: true),
            .update(keychains: [], query: query, changes: changes, caller: caller),
            .delete(keychains: ["/a"], query: ItemQuery(itemClass: .internetPassword), caller: caller, makeTombstones: true),
            .backup(keychain: "/k", destination: "/b", password: Data("pw".utf8)), .shutdown,
            .setAccess(keychains: ["/k"], query: query, change: AccessChange(trust: ["/bin/a"], untrust: ["/bin/b"], anyApplication: false),
                       password: Data("pw".utf8)),
            .grants(change: nil, password: nil),
            .grants(change: GrantChange(application: "/bin/a", groups: ["g", "*"], revoke: true), password: Data()),
            .echo(data: Data()), .echo(data: Data([0, 1, 255])),
            .keyOperation(keychains: ["/k"], request: keyOperation, caller: caller),
            .provideSecretService(busAddress: nil), .provideSecretService(busAddress: "unix:path=/run/user/1000/bus"),
            .serveSSHAgent(defaultLifetime: 60, keychain: "/k", approvalMinutes: 10), .serveSSHAgent(defaultLifetime: nil, keychain: nil, approvalMinutes: 0),
            .sshUses(revoke: nil), .sshUses(revoke: .approval(7)), .sshUses(revoke: .all),
            .syncNow, .syncStatus(staleAfter: 7 * 86_400), .syncDevices,
            .find(keychains: ["/a"], query: query, caller: caller, withSecrets: true, withAttributes: false),
        ]
    }

    static let sshUses = SSHUseReport(
        approvals: [.init(id: 3, key: "SHA256:k", comment: "laptop", scope: "git signing", granted: Date(timeIntervalSince1970: 1_800_000_000.123),
                          expires: Date(timeIntervalSince1970: 1_800_000_600.123)),
                    .init(id: 4, key: "SHA256:k", comment: "", scope: "every use by python3 (1)", granted: Date(timeIntervalSince1970: 5), expires: nil)],
        lastUses: [.init(key: "SHA256:k", comment: "laptop", at: Date(timeIntervalSince1970: 1_800_000_001.5), by: "ssh (2) ← bash",
                         target: "github.com (SHA256:h)", allowed: "approval")])

    static let enclaveKey = EnclaveKeyData(publicKey: Data([4] + [UInt8](repeating: 1, count: 64)), object: TPMObjectBlob(publicArea: Data([1, 2]), privateArea: Data([3])),
                                           authorization: [UInt8](repeating: 9, count: 32))

    static let syncStatus = SyncStatusSummary(
        server: "https://sync.example", account: "a1", device: "d1", name: "laptop ✓", head: "1a2b-3c4d", sequence: 12, items: 7, epoch: 2,
        isRemoved: false, refusal: .init(name: "fork detected", message: "two heads"),
        staleDevices: [device])

    static let device = SyncDeviceSummary(id: "d2", name: "desk", addedBy: "d1", addedAt: 3, lastSeen: 9, lastHeartbeat: 1_800_000_000_000,
                                          isActive: true, isThisDevice: false, isRecoveryKey: false)

    /// One response of every kind: each answer, and failures with and without a reason.
    static var responses: [AgentResponse] {
        [
            .answer(.done), .answer(.hello(home: "/home/ann/.local/share/keyhaven", pid: 1234)), .answer(.item(item)),
            .answer(.items([item, item])), .answer(.items([])),
            .answer(.status(KeychainStatus(hasPassword: true, isUnlocked: false, isForeign: true))),
            .answer(.settings(LockSettings(useLockInterval: true, lockInterval: 60))), .answer(.count(3)), .answer(.bytes(Data([0xDE, 0xAD]))),
            .answer(.tpmStatus(TPMStatus(tcti: "swtpm:port=2321", manufacturer: "IBM", vendor: "SW TPM", firmware1: 1, firmware2: 2,
                                         failedTries: 3, maxTries: 32, recoveryTime: 600, lockoutRecovery: 86400, inLockout: false,
                                         lockoutAuthorizationSet: true))),
            .answer(.enclaveKey(enclaveKey)), .answer(.provider(pid: 99)),
            .answer(.grants([ApplicationGrant(application: TrustedApplication(path: "/bin/a", digest: Data(repeating: 1, count: 32)), groups: ["g"])])),
            .answer(.sshUses(sshUses)),
            .answer(.syncRound(SyncRoundSummary(pulled: 1, pushed: 2, added: 3, changed: 4, deleted: 5, waiting: 6, head: "1a2b-3c4d"))),
            .answer(.syncStatus(nil)), .answer(.syncStatus(syncStatus)),
            .answer(.syncDevices([device, SyncDeviceSummary(id: "r", name: "recovery key", addedBy: "d1", addedAt: 1, lastSeen: 1, lastHeartbeat: nil,
                                                            isActive: true, isThisDevice: false, isRecoveryKey: true)])),
            .failure(StoreError(.itemNotFound, "no such item")),
            .failure(StoreError(.interactionNotAllowed, "the keychain is locked", reason: .keychainLocked)),
        ]
    }

    /// The payload of a frame (without its length).
    func payload(_ body: some WireCodable, home: String? = nil) -> [UInt8] {
        let frame = AgentFraming.encode(body, home: home)
        #expect(frame.prefix(4).reduce(0) { $0 << 8 | Int($1) } == frame.count - 4)
        return Array(frame.dropFirst(4))
    }

    @Test("Every request survives a round trip, home included: re-encoding the decoded value gives the same bytes")
    func requestsRoundTrip() throws {
        // KEYHAVEN_FUZZ_SEEDS=FOLDER writes these messages there, as the agent fuzz target's seeds
        // (Tests/FuzzCorpus/agent).
        if let folder = ProcessInfo.processInfo.environment["KEYHAVEN_FUZZ_SEEDS"] {
            let seeds = Self.requests.map { payload($0, home: "/h") } + Self.responses.map { payload($0) }
            for (index, seed) in seeds.enumerated() {
                try Data(seed).write(to: URL(fileURLWithPath: folder + "/v\(AgentFraming.version)-message-\(index)"))
            }
        }
        for request in Self.requests {
            let bytes = payload(request, home: "/home/ann")
            let (decoded, home) = try AgentFraming.decodeWithHome(AgentRequest.self, from: bytes)
            #expect(home == "/home/ann")
            #expect(payload(decoded, home: home) == bytes)
        }
        guard case .find(let keychains, let query, let caller, true, true) = try AgentFraming.decode(AgentRequest.self, from: payload(Self.requests[12]))
        else { Issue.record("not a find of whole items"); return }
        guard case .find(_, _, _, true, false) = try AgentFraming.decode(AgentRequest.self, from: payload(Self.requests.last!))
        else { Issue.record("not a find of secrets alone"); return }
        #expect(keychains == ["/a", "/b"] && caller.accessGroups == ["a", "*"] && !caller.interactionAllowed && caller.skipsUntrusted)
        #expect(query.criteria == Self.query.criteria && query.limit == nil && query.tombstone == false)
        #expect(query.persistentReference == .rowID(.genericPassword, 9) && query.hostOrSubdomain == "example.com")
        guard case .keyOperation(_, let operation, _) = try AgentFraming.decode(AgentRequest.self, from: payload(Self.requests[22]))
        else { Issue.record("not a key operation"); return }
        #expect(operation == Self.keyOperation)
    }

    @Test("Every response survives a round trip; an error comes back as the same code, reason and message")
    func responsesRoundTrip() throws {
        for response in Self.responses {
            let bytes = payload(response)
            #expect(payload(try AgentFraming.decode(AgentResponse.self, from: bytes)) == bytes)
        }
        let decoded = try Self.responses.map { try AgentFraming.decode(AgentResponse.self, from: payload($0)) }
        let item = try #require(try decoded[3].get().items().last)
        #expect(item.attributes == Self.item.attributes && item.secret == Self.item.secret && item.access == Self.access)
        #expect(item.persistentReference == Self.item.persistentReference && item.accessControlFlags == 1 << 40)
        #expect(try decoded[1].get().hello() == ("/home/ann/.local/share/keyhaven", 1234))
        #expect(try decoded[2].get().item().persistentReference == Self.item.persistentReference)
        #expect(try decoded[4].get().items().isEmpty)
        #expect(try decoded[5].get().status().isForeign && decoded[6].get().settings().lockInterval == 60)
        #expect(try decoded[7].get().count() == 3 && decoded[8].get().bytes() == Data([0xDE, 0xAD]))
        #expect(try decoded[9].get().tpmStatus().maxTries == 32 && decoded[10].get().enclaveKey() == Self.enclaveKey)
        #expect(try decoded[11].get().provider() == 99 && decoded[12].get().grants().first?.groups == ["g"])
        #expect(try decoded[13].get().sshUses() == Self.sshUses)
        #expect(try decoded[14].get().syncRound().waiting == 6 && decoded[14].get().syncRound().head == "1a2b-3c4d")
        #expect(try decoded[15].get().syncStatus() == nil && decoded[16].get().syncStatus() == Self.syncStatus)
        #expect(try decoded[17].get().syncDevices().first == Self.device && decoded[17].get().syncDevices().last?.lastHeartbeat == nil)
        #expect(decoded[18].error == StoreError(.itemNotFound, "no such item") && decoded[18].error?.reason == nil)
        #expect(decoded[19].error?.code == .interactionNotAllowed && decoded[19].error?.reason == .keychainLocked)
    }

    @Test("Every failure code and reason has its number on the wire, each once")
    func failureNumbers() throws {
        #expect(AgentResponse.codes.count == StoreError.Code.all.count && Set(AgentResponse.codes) == Set(StoreError.Code.all))
        #expect(AgentResponse.reasons.count == StoreError.Reason.all.count && Set(AgentResponse.reasons) == Set(StoreError.Reason.all))
        for code in StoreError.Code.all {
            let decoded = try AgentFraming.decode(AgentResponse.self, from: payload(AgentResponse.failure(StoreError(code, "m"))))
            #expect(decoded.error?.code == code)
        }
        // A number no code has, and a reason no failure has, are malformed.
        let unknownCode: [UInt8] = [AgentFraming.version, 0, 0, UInt8(AgentResponse.codes.count + 1), 0, 0, 0, 0, 0]
        #expect(throws: StoreError.self) { try AgentFraming.decode(AgentResponse.self, from: unknownCode) }
        let unknownReason: [UInt8] = [AgentFraming.version, 0, 0, 1, UInt8(AgentResponse.reasons.count + 1), 0, 0, 0, 0]
        #expect(throws: StoreError.self) { try AgentFraming.decode(AgentResponse.self, from: unknownReason) }
        #expect(throws: StoreError.self) { try AgentFraming.decode(AgentResponse.self, from: [AgentFraming.version, 0, 17]) }
    }

    @Test("An answer of another kind than the request's is an error, never an empty result")
    func mismatchedAnswer() {
        #expect(throws: StoreError(.decode, "the agent answered count where items was due")) { try AgentAnswer.count(0).items() }
        #expect(throws: StoreError(.decode, "the agent answered done where status was due")) { try AgentAnswer.done.status() }
        #expect(throws: StoreError(.decode, "the agent answered items where item was due")) { try AgentAnswer.items([]).item() }
    }

    @Test("Each request's tag is the first byte of its body, and the number docs/agent-protocol.md gives it")
    func tags() {
        for request in Self.requests {
            var writer = ByteWriter()
            request.write(to: &writer)
            #expect(writer.bytes.first == request.tag)
        }
        #expect(Self.requests.map(\.tag) == [1, 2, 2, 3, 4, 5, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 17, 18, 18, 19, 19, 16, 20, 20, 26, 26, 27, 27, 27, 28, 29, 30, 11])
    }

    @Test("Optionals and lists are the bytes docs/agent-protocol.md gives: a u8 flag, a u32 little-endian count")
    func containerBytes() {
        func body(_ value: some WireCodable) -> [UInt8] {
            var writer = ByteWriter()
            value.write(to: &writer)
            return writer.bytes
        }
        let slashK: [UInt8] = [2, 0, 0, 0, 0x2F, 0x6B]  // the text "/k"
        #expect(body(AgentRequest.lock(keychain: nil)) == [5, 0])
        #expect(body(AgentRequest.lock(keychain: "/k")) == [5, 1] + slashK)
        #expect(body(AgentRequest.create(keychain: "/k", password: nil)) == [2] + slashK + [0])
        #expect(body(AgentRequest.grants(change: nil, password: Data([9]))) == [18, 0, 1, 1, 0, 0, 0, 9])
        #expect(body(AgentRequest.grants(change: GrantChange(application: "/k", groups: ["/k", "/k"], revoke: true), password: nil))
            == [18, 1] + slashK + [2, 0, 0, 0] + slashK + slashK + [1, 0])
        let find = body(AgentRequest.find(keychains: ["/k", "/k"], query: ItemQuery(itemClass: .genericPassword), caller: Caller(accessGroups: ["*"]),
                                          withSecrets: true))
        #expect(Array(find.prefix(17)) == [11, 2, 0, 0, 0] + slashK + slashK)
        // A find ends with its two booleans: with secrets, with attributes (true unless said).
        #expect(Array(find.suffix(2)) == [1, 1])
        let secretsAlone = body(AgentRequest.find(keychains: ["/k"], query: ItemQuery(itemClass: .genericPassword), caller: Caller(accessGroups: ["*"]),
                                                  withSecrets: true, withAttributes: false))
        #expect(Array(secretsAlone.suffix(2)) == [1, 0])
        // A response is a tag, then that case's fields; a failure is its code's number, its
        // reason's (0: none) and its message.
        #expect(body(AgentResponse.answer(.done)) == [1])
        #expect(body(AgentResponse.answer(.count(3))) == [7, 3, 0, 0, 0, 0, 0, 0, 0])
        #expect(body(AgentResponse.answer(.items([]))) == [4, 0, 0, 0, 0])
        #expect(body(AgentResponse.answer(.items([Self.item]))) == [4, 1, 0, 0, 0] + body(Self.item))
        #expect(body(AgentResponse.answer(.item(Self.item))) == [3] + body(Self.item))
        #expect(body(AgentResponse.failure(StoreError(.itemNotFound, "x"))) == [0, 5, 0, 1, 0, 0, 0, 0x78])
        #expect(body(AgentResponse.failure(StoreError(.interactionNotAllowed, "x", reason: .keychainLocked))) == [0, 7, 1, 1, 0, 0, 0, 0x78])
    }

    @Test("A client polls for an answer only while answers of that kind come soon: never for slow ones")
    func answerWaitBudget() {
        let tag: UInt8 = 31  // no request's: other tests' answers do not move it
        guard AnswerWait.longest > 0 else { return }  // KEYHAVEN_AGENT_POLL_US=0: never polls
        #expect(AnswerWait.budget(tag: tag) == AnswerWait.longest / 2)
        for _ in 0..<40 { AnswerWait.record(tag: tag, nanoseconds: 40_000) }
        #expect((70_000...90_000).contains(AnswerWait.budget(tag: tag)))
        for _ in 0..<40 { AnswerWait.record(tag: tag, nanoseconds: 2_000_000) }
        #expect(AnswerWait.budget(tag: tag) == 0)
        for _ in 0..<60 { AnswerWait.record(tag: tag, nanoseconds: 40_000) }
        #expect(AnswerWait.budget(tag: tag) > 0, "polling comes back when answers are quick again")
    }

    @Test("Another version is .wrongVersion, naming it (a JSON frame is version 1)")
    func versions() {
        #expect(throws: StoreError.self) { try AgentFraming.decode(AgentRequest.self, from: [2, 0, 1]) }
        do {
            _ = try AgentFraming.decode(AgentRequest.self, from: Array(#"{"v":1,"body":{"hello":{}}}"#.utf8))
            Issue.record("a version 1 frame was read")
        } catch {
            #expect(error.code == .wrongVersion && error.message.contains("protocol 1, not \(AgentFraming.version)"))
        }
    }

    @Test("Every truncation of every valid message is a .decode error, as is a trailing byte")
    func truncations() {
        func check<Body: WireCodable>(_ type: Body.Type, _ bytes: [UInt8]) {
            for end in 1..<bytes.count {
                #expect(throws: StoreError.self) { _ = try AgentFraming.decode(type, from: Array(bytes.prefix(end))) }
            }
            #expect(throws: StoreError(.decode, "a malformed agent message (trailing bytes)")) {
                _ = try AgentFraming.decode(type, from: bytes + [0])
            }
        }
        for request in Self.requests { check(AgentRequest.self, payload(request, home: "/h")) }
        for response in Self.responses { check(AgentResponse.self, payload(response)) }
    }

    @Test("Forged counts and lengths fail before allocating; invalid UTF-8, booleans and tags are refused")
    func forgedFields() {
        let v = AgentFraming.version
        let cases: [(String, [UInt8])] = [
            ("count larger than the message", [v, 0, 11] + [0xFF, 0xFF, 0xFF, 0x7F]),
            ("the data is truncated", [v, 0, 6] + [0xFF, 0xFF, 0xFF, 0xFF]),
            ("text that is not UTF-8", [v, 0, 6, 2, 0, 0, 0, 0xC3, 0x28]),
            // A truncated sequence then "a": repaired, it would be as long as sent.
            ("text that is not UTF-8", [v, 0, 6, 4, 0, 0, 0, 0xF0, 0x9F, 0x98, 0x61]),
            ("a boolean that is neither 0 nor 1", [v, 7]),
            ("an unknown request", [v, 0, 200]),
        ]
        for (message, bytes) in cases {
            do {
                _ = try AgentFraming.decode(AgentRequest.self, from: bytes)
                Issue.record("decoded: \(message)")
            } catch {
                #expect(error.code == .decode && error.message.contains(message), "\(error.message)")
            }
        }
    }

    @Test("A hundred thousand random mutations of valid messages: each decodes or fails with an error")
    func mutations() {
        var random = SeededGenerator(seed: 0x6B65_7968_6176_656E)
        let seeds = Self.requests.map { payload($0, home: "/h") } + Self.responses.map { payload($0) }
        var decoded = 0
        for round in 0..<100_000 {
            var bytes = seeds[round % seeds.count]
            for _ in 0...Int.random(in: 0..<4, using: &random) {
                let at = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<3, using: &random) {
                case 0: bytes[at] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes.insert(UInt8.random(in: 0...255, using: &random), at: at)
                default: if bytes.count > 1 { bytes.remove(at: at) }
                }
            }
            if (try? AgentFraming.decode(AgentRequest.self, from: bytes)) != nil { decoded += 1 }
            if (try? AgentFraming.decode(AgentResponse.self, from: bytes)) != nil { decoded += 1 }
        }
        // Some mutations land in text or data and still decode; most do not.
        #expect(decoded > 0 && decoded < 100_000)
    }
}
