import KeychainTestSupport
import KeyhavenSyncCore
import KeyhavenSyncServer
import Testing

/// The registry of waiting polls, alone: who wakes, and what is kept without the database. The
/// waits run on a thread of their own: other suites' blocking waits hold the cooperative pool's
/// threads, and a wait's timer would fire late there.
struct WakeupsTests {
    @Test("A notification's payload names its topic and nothing else; a malformed one is no topic")
    func payloads() {
        let account = AccountID(), slot = [UInt8](repeating: 0xAB, count: 32)
        for topic in [Wakeups.Topic.account(account), .pairing(slot: slot, side: 0), .pairing(slot: slot, side: 1)] {
            #expect(Wakeups.Topic(payload: topic.payload) == topic)
        }
        for bad in ["", "a", "a" + account.hex.dropLast(), "x" + account.hex, "p" + Hex.encode(slot) + "2", "p" + Hex.encode(slot)] {
            #expect(Wakeups.Topic(payload: String(bad)) == nil, "\(bad)")
        }
    }

    @Test("A change wakes the polls of its topic only, at once; the others wait for their deadline")
    func wakesItsTopic() async {
        await withTaskExecutorPreference(DedicatedExecutor.shared) { await wakesItsTopicHere() }
    }

    private func wakesItsTopicHere() async {
        let wakeups = Wakeups()
        wakeups.listening(true)
        let (mine, other) = (AccountID(), AccountID())
        let waiter = wakeups.register(.account(mine)), bystander = wakeups.register(.account(other))
        #expect(wakeups.openPolls == 2)
        // A guard of what a look may keep (an authentication) is woken too, but is not a poll.
        let guardOnly = wakeups.register(.account(mine), isPoll: false)
        #expect(wakeups.openPolls == 2)
        wakeups.unregister(guardOnly)
        wakeups.deliver(Wakeups.Topic.account(mine).payload)
        let start = ContinuousClock.now
        await waiter.wait(until: .now + .seconds(20))
        #expect(ContinuousClock.now - start < .seconds(5))
        await bystander.wait(until: .now + .milliseconds(200))
        #expect(ContinuousClock.now - start >= .milliseconds(200))
        wakeups.unregister(waiter)
        wakeups.unregister(bystander)
        #expect(wakeups.openPolls == 0)
    }

    @Test("A head is kept only while listening, only if no change came since the look began, and until its account changes")
    func keptHeads() {
        let wakeups = Wakeups(), account = AccountID()
        let head = LogHead(sequence: 4, hash: [UInt8](repeating: 1, count: 32))
        // Not listening: nothing is kept (a notification may be missed).
        var waiter = wakeups.register(.account(account))
        wakeups.remember(head, of: account, lookedAfter: waiter)
        #expect(wakeups.knownHead(of: account) == nil)
        wakeups.unregister(waiter)
        wakeups.listening(true)
        // A change between registering and remembering: the look may be old, so it is not kept.
        waiter = wakeups.register(.account(account))
        wakeups.deliver(Wakeups.Topic.account(account).payload)
        wakeups.remember(head, of: account, lookedAfter: waiter)
        #expect(wakeups.knownHead(of: account) == nil)
        wakeups.unregister(waiter)
        // A quiet look is kept, until a change of that account or a change of the listener.
        waiter = wakeups.register(.account(account))
        wakeups.remember(head, of: account, lookedAfter: waiter)
        wakeups.unregister(waiter)
        #expect(wakeups.knownHead(of: account) == head)
        wakeups.deliver(Wakeups.Topic.account(AccountID()).payload)
        #expect(wakeups.knownHead(of: account) == head)
        wakeups.deliver(Wakeups.Topic.account(account).payload)
        #expect(wakeups.knownHead(of: account) == nil)
        waiter = wakeups.register(.account(account))
        wakeups.remember(head, of: account, lookedAfter: waiter)
        wakeups.unregister(waiter)
        wakeups.listening(false)
        wakeups.listening(true)
        #expect(wakeups.knownHead(of: account) == nil)
    }

    @Test("A device's keys are kept like heads: dropped by a change of their account (a removal is one)")
    func keptKeys() {
        let wakeups = Wakeups(), account = AccountID(), device = DeviceIdentity()
        wakeups.listening(true)
        let waiter = wakeups.register(.account(account))
        wakeups.remember(device.publicKeys, of: device.id, on: account, lookedAfter: waiter)
        wakeups.unregister(waiter)
        #expect(wakeups.knownKeys(of: device.id, on: account) == device.publicKeys)
        #expect(wakeups.knownKeys(of: device.id, on: AccountID()) == nil)
        wakeups.deliver(Wakeups.Topic.account(account).payload)
        #expect(wakeups.knownKeys(of: device.id, on: account) == nil)
    }

    @Test("Stopping answers every poll, and a poll registered afterwards does not wait")
    func stopping() async {
        await withTaskExecutorPreference(DedicatedExecutor.shared) { await stoppingHere() }
    }

    private func stoppingHere() async {
        let wakeups = Wakeups()
        wakeups.listening(true)
        let waiter = wakeups.register(.pairing(slot: [UInt8](repeating: 0, count: 32), side: 1))
        wakeups.stop()
        let start = ContinuousClock.now
        await waiter.wait(until: .now + .seconds(20))
        #expect(ContinuousClock.now - start < .seconds(5) && wakeups.isStopping)
        wakeups.unregister(waiter)
    }

    @Test("Not listening, a poll looks again every fallback interval; listening, only at its deadline")
    func fallback() {
        let wakeups = Wakeups(fallbackInterval: .seconds(1))
        let deadline = ContinuousClock.now + .seconds(30)
        #expect(wakeups.nextLook(before: deadline) < .now + .seconds(2))
        wakeups.listening(true)
        #expect(wakeups.nextLook(before: deadline) == deadline)
    }
}
