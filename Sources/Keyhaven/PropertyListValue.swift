import Foundation

/// Non-string values are stored as a binary property list, FXKeychain's format, so other code
/// (and other languages) can read them. The root is the value itself, even a number or a date.
///
/// Decoding goes through `PropertyListSerialization`, which makes only property-list primitives,
/// and then `Decodable`, which makes only the type asked for: stored bytes can never instantiate
/// another type (the lesson of NSCoding-based keychain wrappers).
enum PropertyListValue {
    static func encode<T: Encodable>(_ value: T) throws -> Data {
        let encoder = PropertyListEncoder()
        encoder.outputFormat = .binary
        // PropertyListEncoder refuses a number or string as the root: encode it inside an array
        // and take it out again.
        let wrapped = try encoder.encode([value])
        guard let array = try PropertyListSerialization.propertyList(from: wrapped, options: [], format: nil) as? NSArray,
              array.count == 1 else { throw CocoaError(.propertyListWriteInvalid) }
        return try PropertyListSerialization.data(fromPropertyList: array[0], format: .binary, options: 0)
    }

    static func decode<T: Decodable>(_ type: T.Type, from data: Data) throws -> T {
        let root = try PropertyListSerialization.propertyList(from: data, options: [], format: nil)
        let wrapped = try PropertyListSerialization.data(fromPropertyList: NSArray(array: [root]), format: .binary, options: 0)
        return try PropertyListDecoder().decode([T].self, from: wrapped)[0]
    }
}
