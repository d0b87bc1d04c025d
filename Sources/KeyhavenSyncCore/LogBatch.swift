import KeychainModel

/// Entries with a head: the body of a push (the head the entries continue) and of a pull's answer
/// (the server's head). Each entry is length-prefixed, so a reader skips nothing and a forged
/// count or length fails before anything is allocated for it.
package struct LogBatch: Hashable, Sendable, WireCodable {
    package let head: LogHead
    package let entries: [LogEntry]

    package init(head: LogHead, entries: [LogEntry]) {
        (self.head, self.entries) = (head, entries)
    }

    package func write(to writer: inout ByteWriter) {
        head.write(to: &writer)
        writer.u32(UInt32(entries.count))
        for entry in entries {
            let bytes = entry.wireBytes
            writer.u32(UInt32(bytes.count))
            writer.raw(bytes)
        }
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        head = try LogHead(from: &reader)
        let count = Int(try reader.u32())
        // Each entry takes at least its 4-byte length: a count the bytes cannot hold is a lie.
        guard count <= reader.remaining / 4 else { throw CodecError(.malformed, "more entries than the bytes can hold") }
        var entries: [LogEntry] = []
        entries.reserveCapacity(count)
        for _ in 0..<count {
            let length = Int(try reader.u32())
            guard length <= LogEntry.maximumSize else { throw CodecError(.malformed, "an entry over the size limit") }
            entries.append(try LogEntry(wireBytes: Array(try reader.take(length))))
        }
        self.entries = entries
    }
}
