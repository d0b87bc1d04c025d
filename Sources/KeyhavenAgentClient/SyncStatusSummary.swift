import KeychainModel

/// Where the agent's keychain home is in sync (``AgentRequest/syncStatus(staleAfter:)``): what
/// `keyhaven sync status` prints, from what the device verified last. Identifiers are in hex.
package struct SyncStatusSummary: Sendable, Equatable {
    /// The refusal the last round ended in: its name (as "fork detected") and message.
    package struct Refusal: Sendable, Equatable {
        package var name: String
        package var message: String

        package init(name: String, message: String) { (self.name, self.message) = (name, message) }
    }

    package var server: String
    package var account: String
    package var device: String
    package var name: String
    /// The verified head: its short fingerprint and its position in the log.
    package var head: String
    package var sequence: UInt64
    package var items: Int
    /// The key epoch at the verified head.
    package var epoch: UInt32
    /// The device was removed from its account (or the server refuses it): it syncs no more.
    package var isRemoved: Bool
    package var refusal: Refusal?
    /// Active devices not heard from for longer than the limit asked for (withheld entries?).
    package var staleDevices: [SyncDeviceSummary]

    package init(server: String, account: String, device: String, name: String, head: String, sequence: UInt64, items: Int,
                 epoch: UInt32, isRemoved: Bool, refusal: Refusal?, staleDevices: [SyncDeviceSummary]) {
        (self.server, self.account, self.device, self.name, self.head, self.sequence) = (server, account, device, name, head, sequence)
        (self.items, self.epoch, self.isRemoved, self.refusal, self.staleDevices) = (items, epoch, isRemoved, refusal, staleDevices)
    }
}

extension SyncStatusSummary.Refusal: WireCodable {
    package func write(to writer: inout ByteWriter) {
        name.write(to: &writer); message.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(name: try String(from: &reader), message: try String(from: &reader))
    }
}

extension SyncStatusSummary: WireCodable {
    package func write(to writer: inout ByteWriter) {
        server.write(to: &writer); account.write(to: &writer); device.write(to: &writer); name.write(to: &writer)
        head.write(to: &writer); sequence.write(to: &writer); UInt64(items).write(to: &writer); epoch.write(to: &writer)
        isRemoved.write(to: &writer); writer.optional(refusal); writer.array(staleDevices)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        let (server, account, device, name) = (try String(from: &reader), try String(from: &reader), try String(from: &reader),
                                               try String(from: &reader))
        let (head, sequence) = (try String(from: &reader), try UInt64(from: &reader))
        guard let items = Int(exactly: try UInt64(from: &reader)) else { throw CodecError(.malformed, "a count out of range") }
        self.init(server: server, account: account, device: device, name: name, head: head, sequence: sequence, items: items,
                  epoch: try UInt32(from: &reader), isRemoved: try Bool(from: &reader), refusal: try reader.optional(Refusal.self),
                  staleDevices: try reader.array(of: SyncDeviceSummary.self))
    }
}
