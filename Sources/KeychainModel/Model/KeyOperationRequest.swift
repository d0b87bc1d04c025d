import FoundationEssentials

/// An operation on a stored key, performed where the keychain is (inside the agent), so a private
/// key never enters the calling process (securityd's model). The key is named by its persistent
/// reference and found with the caller's access groups.
package struct KeyOperationRequest: Sendable, Hashable {
    /// What to do; raw values are the wire's (docs/agent-protocol.md).
    package enum Operation: UInt8, Sendable {
        case sign = 0
        case decrypt = 3
        case keyExchange = 4
        /// The key's public bytes (nothing secret).
        case publicKey = 10
        /// The key's external representation; refused for a key that is not extractable.
        case export = 11
    }

    package var operation: Operation
    package var reference: PersistentReference
    /// Apple's algorithm string (`algid:sign:ECDSA:...`); empty for `publicKey` and `export`.
    package var algorithm: String = ""
    package var input: Data = Data()
    /// Key exchange: the other side's public key bytes and key type, the KDF's size and shared info.
    package var peerPublicKey: Data = Data()
    package var peerKeyType: Int64 = 0
    package var requestedSize: Int64?
    package var sharedInfo: Data = Data()

    package init(_ operation: Operation, reference: PersistentReference) {
        self.operation = operation
        self.reference = reference
    }
}

extension KeyOperationRequest: WireCodable {
    package func write(to writer: inout ByteWriter) {
        writer.u8(operation.rawValue)
        reference.write(to: &writer)
        algorithm.write(to: &writer)
        input.write(to: &writer)
        peerPublicKey.write(to: &writer)
        peerKeyType.write(to: &writer)
        requestedSize.write(to: &writer)
        sharedInfo.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        guard let operation = Operation(rawValue: try reader.u8()) else { throw CodecError(.malformed, "an unknown key operation") }
        guard let reference = PersistentReference(try Data(from: &reader)) else { throw CodecError(.malformed, "a bad key reference") }
        self.init(operation, reference: reference)
        algorithm = try String(from: &reader)
        input = try Data(from: &reader)
        peerPublicKey = try Data(from: &reader)
        peerKeyType = try Int64(from: &reader)
        requestedSize = try Int64?(from: &reader)
        sharedInfo = try Data(from: &reader)
    }
}
