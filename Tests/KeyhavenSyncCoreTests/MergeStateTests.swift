import KeyhavenSyncCore
import PropertyBased
import Testing

/// The merge rule: whatever the order versions arrive in, the winners and the live items are the
/// same (property-based, over random histories of three devices); losers are kept.
struct MergeStateTests {
    static let devices = (0..<3).map { _ in DeviceID() }
    static let records = (0..<6).map { _ in RecordID() }

    /// A history from generated numbers: each step is (device, record, primary key, clock, delete, content).
    static func history(_ steps: [[Int]]) -> [RecordVersion] {
        steps.map { step in
            RecordVersion(record: records[step[1] % records.count], version: UInt64(step[3] % 8), device: devices[step[0] % devices.count],
                          isDeleted: step[4] % 5 == 0, primaryKey: [UInt8(step[2] % 3)], content: [UInt8(step[5] % 256)])
        }
    }

    /// A deterministic shuffle (SplitMix64) of `values` by `seed`.
    static func shuffled<T>(_ values: [T], seed: Int) -> [T] {
        var state = UInt64(bitPattern: Int64(seed)) &+ 0x9E37_79B9_7F4A_7C15
        func next() -> UInt64 {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return z ^ (z >> 31)
        }
        var result = values
        for index in result.indices.reversed() where index > 0 {
            result.swapAt(index, Int(next() % UInt64(index + 1)))
        }
        return result
    }

    static let steps = Gen.int(in: 0...1_000).array(of: 6...6).array(of: 1...40)

    @Test("Winners and live items do not depend on the order versions arrive in, nor on repeats")
    func orderIndependent() async {
        await propertyCheck(count: 300, input: Self.steps, Gen.int(in: 0...1_000_000)) { steps, seed in
            let history = Self.history(steps)
            var inOrder = MergeState(), shuffled = MergeState()
            for version in history { inOrder.apply(version) }
            for version in Self.shuffled(history + history.prefix(5), seed: seed) { shuffled.apply(version) }
            #expect(inOrder.records == shuffled.records)
            #expect(inOrder.items == shuffled.items)
            #expect(inOrder.duplicateRecords == shuffled.duplicateRecords)
            // Each record's winner outranks every other version of it.
            for (record, winner) in inOrder.records {
                #expect(history.filter { $0.record == record && $0 != winner }.allSatisfy { winner.outranks($0) })
            }
            // Nothing is lost: every version is a winner or in the conflict history, or was superseded in order.
            #expect(Set(inOrder.conflicts).isSubset(of: Set(history)))
        }
    }

    @Test("Two versions alike but for their primary key (one clock reading of one device): the same winner in either order")
    func tieOnEverythingButPrimaryKey() {
        let record = RecordID()
        let first = RecordVersion(record: record, version: 7, device: Self.devices[0], isDeleted: false, primaryKey: [0], content: [175])
        let second = RecordVersion(record: record, version: 7, device: Self.devices[0], isDeleted: false, primaryKey: [1], content: [175])
        #expect(first.outranks(second) != second.outranks(first))
        var forward = MergeState(), backward = MergeState()
        forward.apply(first)
        forward.apply(second)
        backward.apply(second)
        backward.apply(first)
        #expect(forward.records == backward.records && forward.items == backward.items)
    }

    @Test("A stale edit loses to the newer one and is kept; a tombstone wins over an older edit")
    func staleEditKept() {
        let record = RecordID()
        let newer = RecordVersion(record: record, version: 20, device: Self.devices[0], isDeleted: false, primaryKey: [1], content: [2])
        let stale = RecordVersion(record: record, version: 10, device: Self.devices[1], isDeleted: false, primaryKey: [1], content: [3])
        var state = MergeState()
        state.apply(newer)
        state.apply(stale)
        #expect(state.records[record] == newer && state.conflicts == [stale])
        let tombstone = RecordVersion(record: record, version: 30, device: Self.devices[1], isDeleted: true, primaryKey: [1], content: [])
        state.apply(tombstone)
        #expect(state.records[record] == tombstone && state.items.isEmpty)
    }

    @Test("Two records of one primary key: the lower record id survives with the newer content; the other is to be tombstoned")
    func samePrimaryKey() {
        let (low, high) = (Self.records.min()!, Self.records.max()!)
        var state = MergeState()
        state.apply(RecordVersion(record: low, version: 5, device: Self.devices[0], isDeleted: false, primaryKey: [9], content: [1]))
        state.apply(RecordVersion(record: high, version: 7, device: Self.devices[1], isDeleted: false, primaryKey: [9], content: [2]))
        #expect(state.items[[9]]?.record == low && state.items[[9]]?.version.content == [2])
        #expect(state.duplicateRecords == [high])
    }

    @Test("The clock: strictly increasing, close to wall time, never behind what it observed")
    func clock() {
        var clock = HybridClock()
        let first = clock.tick(milliseconds: 1_000)
        let second = clock.tick(milliseconds: 1_000)
        #expect(second > first && first >> 16 == 1_000)
        clock.observe(5_000 << 16)
        #expect(clock.tick(milliseconds: 2_000) > 5_000 << 16)
        let later = clock.tick(milliseconds: 9_000)
        #expect(later == 9_000 << 16)
    }
}
