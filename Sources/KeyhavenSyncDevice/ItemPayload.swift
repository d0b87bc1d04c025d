import Crypto
import FoundationEssentials
import KeychainModel
import KeyhavenSyncCore

/// How an item travels in a sealed record: its class, every attribute but the ones the keychain
/// derives (`sha1`), its secret and its access control, as the agent protocol encodes a new item;
/// with its primary key (the class and its primary-key attributes, canonical) in front, so a
/// tombstone says which item it deletes. All of it is inside the record's ciphertext.
enum ItemPayload {
    static let derivedAttributes: Set<String> = [AttributeName.sha1.code]
    static let format: UInt8 = 1

    /// A stored item as the new item that would recreate it.
    static func item(_ stored: StoredItem) -> NewItem {
        NewItem(itemClass: stored.itemClass, attributes: stored.attributes.filter { !derivedAttributes.contains($0.key) },
                secret: stored.secret, accessControlFlags: stored.accessControlFlags)
    }

    /// The class and the primary-key attributes, each by the form the keychain compares it in
    /// (unset ones by their default): equal for two items exactly when the keychain would call
    /// them duplicates.
    static func primaryKey(_ item: NewItem) -> [UInt8] {
        var writer = ByteWriter()
        item.itemClass.write(to: &writer)
        for descriptor in item.itemClass.schema.primaryKey {
            let value = item.attributes[descriptor.name] ?? descriptor.defaultValue
            // Absent from the key of every item without one, so those keys read as they always have.
            if descriptor.name == SecretServiceAttributes.discriminatorName, value?.comparableBytes.isEmpty ?? true { continue }
            writer.raw(descriptor.name.utf8)
            Data(value?.matchKey(for: descriptor.kind) ?? []).write(to: &writer)
        }
        return writer.bytes
    }

    /// SHA-256 of the payload that carries `item`: equal digests, equal items. The merge keeps
    /// these, never the payloads, so no plaintext outlives the moment it is needed.
    static func digest(_ item: NewItem) -> [UInt8] {
        var bytes = encode(primaryKey: primaryKey(item), item: item)
        defer { zeroize(&bytes) }
        return digest(payload: bytes)
    }

    static func digest(payload: [UInt8]) -> [UInt8] { Array(SHA256.hash(data: payload)) }

    /// The accessibilities whose items sync: WhenUnlocked, AfterFirstUnlock, Always.
    static let syncingAccessibilities = [KeyClass.whenUnlocked, .afterFirstUnlock, .always].map(\.rawValue)

    /// The sync class of the item's accessibility: A for WhenUnlocked, C for AfterFirstUnlock and
    /// Always; nil for the ThisDeviceOnly ones, which never sync.
    static func syncClass(_ item: NewItem) -> SyncClass? {
        switch item.attributes[.accessible] {
        case nil: return .c
        case .string(let code)?:
            switch KeyClass(rawValue: code) {
            case .whenUnlocked: return .a
            case .afterFirstUnlock, .always: return .c
            default: return nil
            }
        default: return nil
        }
    }

    static func encode(primaryKey: [UInt8], item: NewItem?) -> [UInt8] {
        var writer = ByteWriter()
        writer.u8(format)
        Data(primaryKey).write(to: &writer)
        item.write(to: &writer)
        return writer.bytes
    }

    static func decode(_ bytes: [UInt8]) throws(SyncError) -> (primaryKey: [UInt8], item: NewItem?) {
        do {
            var reader = ByteReader(bytes)
            guard try reader.u8() == format else { throw SyncError(.malformed, "a record of an unknown payload format") }
            let primaryKey = Array(try Data(from: &reader))
            let item = try NewItem?(from: &reader)
            guard reader.remaining == 0 else { throw SyncError(.malformed, "trailing bytes after a record's item") }
            if let item, ItemPayload.primaryKey(item) != primaryKey {
                throw SyncError(.malformed, "a record whose item does not have the primary key it names")
            }
            return (primaryKey, item)
        } catch let error as SyncError {
            throw error
        } catch {
            throw SyncError(.malformed, "a record's item does not decode")
        }
    }

    /// The query that finds the item with `primaryKey`'s attributes (live, synchronizable).
    static func query(for item: NewItem) -> ItemQuery {
        var query = ItemQuery(itemClass: item.itemClass)
        for descriptor in item.itemClass.schema.primaryKey {
            if let value = item.attributes[descriptor.name] ?? descriptor.defaultValue { query.criteria[descriptor.name] = value }
        }
        query.criteria[.synchronizable] = .number(1)
        query.limit = 1
        return query
    }
}
