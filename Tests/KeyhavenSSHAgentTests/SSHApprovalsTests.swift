import Crypto
import Foundation
import KeyhavenSSHAgent
import Testing

/// ``SSHApprovals`` without an agent: which scope a prompt offers, what each covers, and how
/// approvals end.
struct SSHApprovalsTests {
    static let blob = KeyringTests.blob(Curve25519.Signing.PrivateKey())
    static let process = ProcessMark(pid: 4242, started: 77)

    static func use(namespace: String? = nil, destination: SessionBinding? = nil, forwarded: Bool = false) -> KeyUse {
        KeyUse(publicBlob: blob, comment: "laptop", confirm: true, destination: destination, forwarded: forwarded, namespace: namespace)
    }

    @Test("A namespace is approved for its minutes, not another namespace, not a forwarded request; expired, it is gone")
    func namespaces() throws {
        let approvals = SSHApprovals()
        let now = ContinuousClock.now
        let scope = try #require(SSHApprovals.scope(for: Self.use(namespace: "git"), process: Self.process, chain: "ssh-keygen (1)",
                                                    hostNames: [], minutes: 10, now: now))
        #expect(SSHApprovals.buttonLabel(for: scope, minutes: 10) == "Allow git signing for 10 min")
        approvals.grant(scope, for: Self.use(namespace: "git"), now: now)
        let other = ProcessMark(pid: 1, started: 1)
        #expect(approvals.approval(for: Self.use(namespace: "git"), process: other, alive: { _ in true }, now: now) != nil)
        #expect(approvals.approval(for: Self.use(namespace: "file"), process: other, alive: { _ in true }, now: now) == nil)
        #expect(approvals.approval(for: Self.use(namespace: "git", forwarded: true), process: other, alive: { _ in true }, now: now) == nil)
        #expect(approvals.approval(for: Self.use(), process: other, alive: { _ in true }, now: now) == nil)
        #expect(approvals.approval(for: Self.use(namespace: "git"), process: other, alive: { _ in true }, now: now + .seconds(601)) == nil)
        #expect(approvals.current(alive: { _ in true }).isEmpty)
    }

    @Test("With no namespace and no destination the scope is the process, for as long as it runs; 0 minutes offers no namespace approval")
    func processes() throws {
        let approvals = SSHApprovals()
        let scope = try #require(SSHApprovals.scope(for: Self.use(), process: Self.process, chain: "python3 (4242)", hostNames: [], minutes: 0))
        #expect(SSHApprovals.buttonLabel(for: scope, minutes: 0) == "Allow this process")
        #expect(SSHApprovals.scope(for: Self.use(namespace: "git"), process: Self.process, chain: "", hostNames: [], minutes: 0) == nil)
        let granted = approvals.grant(scope, for: Self.use())
        #expect(granted.expires == nil)
        #expect(approvals.approval(for: Self.use(), process: Self.process, alive: { _ in true }) != nil)
        // The same pid started later is another process.
        #expect(approvals.approval(for: Self.use(), process: ProcessMark(pid: 4242, started: 78), alive: { _ in true }) == nil)
        // Another key is not approved.
        let otherKey = KeyUse(publicBlob: KeyringTests.blob(Curve25519.Signing.PrivateKey()), comment: "", confirm: true,
                              destination: nil, forwarded: false, namespace: nil)
        #expect(approvals.approval(for: otherKey, process: Self.process, alive: { _ in true }) == nil)
        // Once the process is gone, so is its approval.
        #expect(approvals.approval(for: Self.use(), process: Self.process, alive: { _ in false }) == nil)
        #expect(approvals.current(alive: { _ in true }).isEmpty)
    }

    @Test("Revoking one approval leaves the others; revoking all leaves none; the last use of each key is kept")
    func revocationAndLastUse() throws {
        let approvals = SSHApprovals()
        let git = approvals.grant(.namespace("git", forwarded: false, until: .now + .seconds(60)), for: Self.use(namespace: "git"))
        let file = approvals.grant(.namespace("file", forwarded: false, until: .now + .seconds(60)), for: Self.use(namespace: "file"))
        #expect(git.id != file.id)
        #expect(approvals.revoke(git.id))
        #expect(!approvals.revoke(git.id))
        #expect(approvals.current(alive: { _ in true }).map(\.id) == [file.id])
        #expect(approvals.revokeAll() == 1)
        #expect(approvals.current(alive: { _ in true }).isEmpty)

        approvals.recordUse(Self.use(namespace: "git"), by: "ssh-keygen (9) ← git", target: "namespace git", allowed: "prompt")
        approvals.recordUse(Self.use(namespace: "file"), by: "ssh-keygen (10)", target: "namespace file", allowed: "approval")
        let uses = approvals.lastUses()
        #expect(uses.count == 1 && uses[0].target == "namespace file" && uses[0].allowed == "approval")
        #expect(SSHApprovals.target(of: Self.use(namespace: "git\u{1b}[2J", forwarded: true), hostNames: []) == "namespace git[2J, forwarded")
        #expect(SSHApprovals.target(of: Self.use(), hostNames: []) == "no verified destination")
    }

    @Test("At most a bounded number of approvals are kept: the oldest go first")
    func bounded() {
        let approvals = SSHApprovals()
        for index in 0..<(SSHApprovals.maximumApprovals + 3) {
            approvals.grant(.process(ProcessMark(pid: Int32(index), started: 1), chain: ""), for: Self.use())
        }
        let kept = approvals.current(alive: { _ in true })
        #expect(kept.count == SSHApprovals.maximumApprovals && kept.first?.id == 4)
    }
}
