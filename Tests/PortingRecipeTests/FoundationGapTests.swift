import Foundation
import Security
import Testing

/// The swift-corelibs-foundation behaviours that docs/porting.md section 4 names, pinned as they
/// are on Linux today. They are Foundation's, not Keyhaven's; if a toolchain changes one, this
/// test fails and the guide's list (and the wrapper tests it names) must be revised.
@Suite struct FoundationGapTests {
    enum WrapperStatus: Int, Error, CustomNSError {
        case conversionError = -67594
        static var errorDomain: String { "com.example.wrapper.error" }
        var errorCode: Int { rawValue }
    }

    @Test("catch let error as NSError does not match a Swift error on Linux")
    func nsErrorCatch() {
        var matchedAsNSError = false
        do { throw WrapperStatus.conversionError } catch let error as NSError {
            matchedAsNSError = error.domain == WrapperStatus.errorDomain
        } catch {
            matchedAsNSError = false
        }
        #if os(Linux)
        #expect(!matchedAsNSError)
        #else
        #expect(matchedAsNSError)
        #endif
    }

    @Test("NSDictionary.isEqual(to:) is false for a dictionary holding a kSec constant, even against itself")
    func dictionaryEquality() {
        let query: [String: Any] = [kSecClass as String: kSecClassGenericPassword, kSecAttrService as String: "svc"]
        let same = NSDictionary(dictionary: query).isEqual(to: query)
        let withoutConstant = NSDictionary(dictionary: [kSecAttrService as String: "svc"]).isEqual(to: [kSecAttrService as String: "svc"])
        #expect(withoutConstant)
        #if os(Linux)
        #expect(!same)
        #else
        #expect(same)
        #endif
    }

    @Test("AnyHashable of a kSec constant is not AnyHashable of the same String")
    func anyHashableConstant() {
        let query: [String: AnyHashable] = [kSecClass as String: kSecClassGenericPassword]
        let equal = query[kSecClass as String] == AnyHashable(kSecClassGenericPassword as String)
        #if os(Linux)
        #expect(!equal)
        #else
        #expect(equal)
        #endif
        // The recipe that works everywhere: cast the value before comparing.
        #expect(query[kSecClass as String] as? String == kSecClassGenericPassword as String)
    }
}
