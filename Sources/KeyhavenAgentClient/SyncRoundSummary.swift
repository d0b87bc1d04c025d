import KeychainModel

/// What a sync round the agent ran did (``AgentRequest/syncNow``): what `keyhaven sync now`
/// prints. Counts only, and the head's fingerprint: never an item.
package struct SyncRoundSummary: Sendable, Equatable {
    /// Entries pulled and verified, and entries pushed.
    package var pulled: Int
    package var pushed: Int
    /// Items added, changed and deleted in the keychain.
    package var added: Int
    package var changed: Int
    package var deleted: Int
    /// Items that wait because their class is locked.
    package var waiting: Int
    /// The short fingerprint of the head the device and the server agree on.
    package var head: String

    package init(pulled: Int, pushed: Int, added: Int, changed: Int, deleted: Int, waiting: Int, head: String) {
        (self.pulled, self.pushed, self.added, self.changed, self.deleted, self.waiting, self.head) =
            (pulled, pushed, added, changed, deleted, waiting, head)
    }
}

extension SyncRoundSummary: WireCodable {
    package func write(to writer: inout ByteWriter) {
        for count in [pulled, pushed, added, changed, deleted, waiting] { UInt64(count).write(to: &writer) }
        head.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        var counts: [Int] = []
        for _ in 0..<6 {
            guard let count = Int(exactly: try UInt64(from: &reader)) else { throw CodecError(.malformed, "a count out of range") }
            counts.append(count)
        }
        self.init(pulled: counts[0], pushed: counts[1], added: counts[2], changed: counts[3], deleted: counts[4], waiting: counts[5],
                  head: try String(from: &reader))
    }
}
