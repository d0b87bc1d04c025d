import Keyhaven
import Testing

/// Expects `body` to throw a ``KeychainError`` with `code`.
func expectError(_ code: KeychainError.Code, sourceLocation: SourceLocation = #_sourceLocation, _ body: () throws -> Void) {
    let error = #expect(throws: KeychainError.self, sourceLocation: sourceLocation) { try body() }
    #expect(error?.code == code, sourceLocation: sourceLocation)
}
