import Foundation
import KeychainServices

/// Calls of `SecItemImport` and `SecItemExport` as wrapper code makes them, for the import/export tests.
enum ImportExport {
    struct Imported {
        var status: OSStatus
        var items: [AnyObject] = []
        var format: SecExternalFormat = .formatUnknown
        var itemType: SecExternalItemType = .itemTypeUnknown
    }

    static func parameters(_ passphrase: AnyObject?, flags: SecKeyImportExportFlags = [], keyAttributes: [CFString]? = nil)
        -> SecItemImportExportKeyParameters {
        var parameters = SecItemImportExportKeyParameters()
        parameters.version = UInt32(SEC_KEY_IMPORT_EXPORT_PARAMS_VERSION)
        parameters.flags = flags
        parameters.passphrase = passphrase.map { Unmanaged.passRetained($0) }
        parameters.keyAttributes = keyAttributes.map { Unmanaged.passRetained(NSArray(array: $0)) }
        return parameters
    }

    static func `import`(_ data: Data, format: SecExternalFormat = .formatUnknown, fileName: String? = nil, passphrase: AnyObject? = nil,
                         flags: SecKeyImportExportFlags = [], keyAttributes: [CFString]? = nil, into keychain: SecKeychain? = nil) -> Imported {
        var format = format
        var itemType = SecExternalItemType.itemTypeUnknown
        var items: CFArray?
        var parameters = parameters(passphrase, flags: flags, keyAttributes: keyAttributes)
        let status = SecItemImport(data as CFData, fileName.map { NSString(string: $0) }, &format, &itemType, [], &parameters, keychain, &items)
        return Imported(status: status, items: (items as? [AnyObject]) ?? [], format: format, itemType: itemType)
    }

    static func export(_ item: AnyObject, _ format: SecExternalFormat, pem: Bool = false, passphrase: AnyObject? = nil) -> (OSStatus, Data?) {
        var data: CFData?
        var parameters = parameters(passphrase)
        let status = SecItemExport(item, format, pem ? .pemArmour : [], &parameters, &data)
        return (status, data as Data?)
    }

    /// `openssl` with `arguments` (`@name` is a file in `folder`), its exit status.
    @discardableResult
    static func openssl(_ arguments: [String], in folder: URL) throws -> Int32 { try KeyTest.openssl(arguments, in: folder) }

    static func write(_ data: Data, _ name: String, in folder: URL) throws { try data.write(to: folder.appendingPathComponent(name)) }
    static func read(_ name: String, in folder: URL) throws -> Data { try Data(contentsOf: folder.appendingPathComponent(name)) }
    static func text(_ name: String, in folder: URL) throws -> String { String(decoding: try read(name, in: folder), as: UTF8.self) }
}
