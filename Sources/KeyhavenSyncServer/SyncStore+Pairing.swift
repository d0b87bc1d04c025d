import FoundationEssentials
import KeyhavenSyncCore
import Logging
import PostgresNIO

/// The pairing relay: two devices exchange a few sealed messages through the server while one
/// joins. A slot is 32 bytes the devices derive from the pairing code; the server never sees the
/// code and cannot open or forge the messages. Slots expire after ``pairingLifetime`` seconds and
/// are deleted by ``sweepPairing()``. Every statement names its slot, the table's key.
extension SyncStore {
    package static let pairingLifetime = 900

    /// Adds `message` to one side (0: the inviting device, 1: the joining one) of `slot`; its number.
    package func postPairing(slot: [UInt8], role: Int, message: [UInt8]) async throws(SyncServerError) -> Int {
        guard slot.count == 32, (0...1).contains(role) else { throw SyncServerError(.badRequest, "a pairing slot is 32 bytes and a side 0 or 1") }
        guard message.count <= RelayMessages.maximumSize else { throw SyncServerError(.tooLarge, "a pairing message over 64 KiB") }
        let number = try await database { () throws -> Int in
            try await client.withTransaction(logger: logger) { connection in
                try await connection.query("DELETE FROM keyhaven_pairing WHERE slot = \(Data(slot)) AND expires_at < now()", logger: logger)
                let rows = try await connection.query("""
                    SELECT COALESCE(MAX(seq), 0), COALESCE(MIN(expires_at), now() + make_interval(secs => \(Self.pairingLifetime)))
                    FROM keyhaven_pairing WHERE slot = \(Data(slot)) AND role = \(Int16(role))
                    """, logger: logger)
                var next = 1
                var expires = Date().addingTimeInterval(Double(Self.pairingLifetime))
                for try await (last, expiry) in rows.decode((Int32, Date).self) { (next, expires) = (Int(last) + 1, expiry) }
                guard next <= RelayMessages.maximumCount else { throw SyncServerError(.quotaExceeded, "the pairing has all the messages it may have") }
                try await connection.query("""
                    INSERT INTO keyhaven_pairing (slot, role, seq, message, expires_at)
                    VALUES (\(Data(slot)), \(Int16(role)), \(Int32(next)), \(Data(message)), \(expires))
                    """, logger: logger)
                try await Self.notify(.pairing(slot: slot, side: role), in: connection, logger: logger)
                return next
            }
        }
        metrics.notificationsSent.increment()
        return number
    }

    /// Deletes the expired slots' messages (every server does it now and then: an abandoned
    /// pairing posts nothing more that would delete them). The one statement that is not about one
    /// slot or one account, with the migration and the health check.
    package func sweepPairing() async throws(SyncServerError) {
        _ = try await database { try await client.query("DELETE FROM keyhaven_pairing WHERE expires_at < now()", logger: logger) }
    }

    /// The messages of one side of `slot` after number `after`.
    package func pairingMessages(slot: [UInt8], role: Int, after: Int) async throws(SyncServerError) -> [[UInt8]] {
        guard slot.count == 32, (0...1).contains(role) else { throw SyncServerError(.badRequest, "a pairing slot is 32 bytes and a side 0 or 1") }
        return try await database { () throws -> [[UInt8]] in
            let rows = try await client.query("""
                SELECT message FROM keyhaven_pairing
                WHERE slot = \(Data(slot)) AND role = \(Int16(role)) AND seq > \(Int32(clamping: after)) AND expires_at >= now()
                ORDER BY seq
                """, logger: logger)
            var messages: [[UInt8]] = []
            for try await message in rows.decode(Data.self) { messages.append(Array(message)) }
            return messages
        }
    }
}
