import Foundation
import KeychainModel
import KeyhavenAgent
import KeyhavenAgentClient
import Synchronization
import Testing

/// Look-ups of one item take turns in the agent, as many at once as the CPUs (docs/benchmarks.md,
/// "Through the agent"); nothing else waits for a turn.
struct LookUpTurnsTests {
    @Test("Only a look-up of one item takes a turn")
    func whichRequests() {
        let caller = Caller(accessGroups: [])
        var one = ItemQuery(itemClass: .genericPassword)
        one.limit = 1
        var all = ItemQuery(itemClass: .genericPassword)
        all.limit = nil
        #expect(LookUpTurns.needed(for: .find(keychains: ["k"], query: one, caller: caller, withSecrets: true)))
        #expect(!LookUpTurns.needed(for: .find(keychains: ["k"], query: all, caller: caller, withSecrets: true)))
        #expect(!LookUpTurns.needed(for: .add(keychain: "k", item: NewItem(itemClass: .genericPassword, attributes: [:], secret: nil), caller: caller)))
        #expect(!LookUpTurns.needed(for: .unlock(keychain: "k", password: Data("p".utf8))))
        #expect(!LookUpTurns.needed(for: .hello))
        // As many turns as CPUs online (what the agent reads; Foundation's count may differ under
        // a container's limits), unless the environment names a number.
        if ProcessInfo.processInfo.environment["KEYHAVEN_AGENT_LOOKUP_TURNS"] == nil {
            #expect(LookUpTurns().count == max(1, Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))))
        }
    }

    @Test("With both turns taken a third waits, and runs as soon as one is given back")
    func turnsAreBounded() {
        let turns = LookUpTurns(count: 2)
        let started = DispatchSemaphore(value: 0), release = DispatchSemaphore(value: 0), thirdDone = DispatchSemaphore(value: 0)
        let thirdRan = Atomic<Bool>(false)
        for _ in 0..<2 {
            Thread { turns.inTurn { started.signal(); release.wait() } }.start()
        }
        started.wait()
        started.wait()
        Thread {
            turns.inTurn { thirdRan.store(true, ordering: .releasing) }
            thirdDone.signal()
        }.start()
        usleep(200_000)
        let ranEarly = thirdRan.load(ordering: .acquiring)
        #expect(!ranEarly, "a third look-up ran while both turns were taken")
        release.signal()
        #expect(thirdDone.wait(timeout: .now() + 10) == .success)
        let ran = thirdRan.load(ordering: .acquiring)
        #expect(ran)
        release.signal()
    }
}
