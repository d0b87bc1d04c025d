import KeychainModel

/// A device on the sync account, as the verified log says (``AgentRequest/syncDevices``, and the
/// stale devices of ``SyncStatusSummary``): what `keyhaven sync devices` prints. Identifiers are
/// in hex; positions are in the log (no clock).
package struct SyncDeviceSummary: Sendable, Equatable {
    package var id: String
    package var name: String
    package var addedBy: String
    /// The position of its addition and of its last entry.
    package var addedAt: UInt64
    package var lastSeen: UInt64
    /// Its last heartbeat (milliseconds since 1970, by its clock), if it sent one.
    package var lastHeartbeat: UInt64?
    package var isActive: Bool
    package var isThisDevice: Bool
    package var isRecoveryKey: Bool

    package init(id: String, name: String, addedBy: String, addedAt: UInt64, lastSeen: UInt64, lastHeartbeat: UInt64?, isActive: Bool,
                 isThisDevice: Bool, isRecoveryKey: Bool) {
        (self.id, self.name, self.addedBy, self.addedAt, self.lastSeen, self.lastHeartbeat) = (id, name, addedBy, addedAt, lastSeen, lastHeartbeat)
        (self.isActive, self.isThisDevice, self.isRecoveryKey) = (isActive, isThisDevice, isRecoveryKey)
    }
}

extension SyncDeviceSummary: WireCodable {
    package func write(to writer: inout ByteWriter) {
        id.write(to: &writer); name.write(to: &writer); addedBy.write(to: &writer); addedAt.write(to: &writer); lastSeen.write(to: &writer)
        writer.optional(lastHeartbeat); isActive.write(to: &writer); isThisDevice.write(to: &writer); isRecoveryKey.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(id: try String(from: &reader), name: try String(from: &reader), addedBy: try String(from: &reader),
                  addedAt: try UInt64(from: &reader), lastSeen: try UInt64(from: &reader), lastHeartbeat: try reader.optional(UInt64.self),
                  isActive: try Bool(from: &reader), isThisDevice: try Bool(from: &reader), isRecoveryKey: try Bool(from: &reader))
    }
}
