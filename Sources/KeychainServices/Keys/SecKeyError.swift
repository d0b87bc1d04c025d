import Foundation
import KeychainKeys

/// Runs a key operation: a `KeyError` becomes Apple's `CFError` (domain `NSOSStatusErrorDomain`,
/// code the `OSStatus`) in the out-parameter, and the function returns nil.
func keyCall<T>(_ errorOut: UnsafeMutablePointer<Unmanaged<CFError>?>?, _ body: () throws(KeyError) -> T) -> T? {
    do {
        return try body()
    } catch {
        errorOut?.pointee = Unmanaged.passRetained(makeCFError(error.osStatus, error.message))
        return nil
    }
}

/// Apple's error for a status: `NSOSStatusErrorDomain`, the status as the code, a description.
func makeCFError(_ status: OSStatus, _ message: String) -> CFError {
    NSError(domain: "NSOSStatusErrorDomain", code: Int(status), userInfo: [NSLocalizedDescriptionKey: message])
}

/// The parsed algorithm, or the error Apple gives for one a key cannot perform.
func parsedAlgorithm(_ algorithm: SecKeyAlgorithm) throws(KeyError) -> KeyAlgorithm {
    guard let parsed = KeyAlgorithm(appleName: algorithm.rawValue as String) else {
        throw KeyError(.unsupportedAlgorithm, "algorithm \(algorithm.rawValue) is not supported")
    }
    return parsed
}

/// The bytes of a `CFData` argument.
func bytes(of data: CFData) -> [UInt8] { [UInt8](data as Data) }
