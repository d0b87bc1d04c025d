import Foundation
@testable import KeyhavenSecretService
import Testing

/// What the Secret portal's backend refuses of what xdg-desktop-portal passes, without a bus: the
/// calls that reach these checks come from the genuine portal only (SecretPortalTests).
struct SecretPortalRulesTests {
    @Test("Application ids are D-Bus names as Flatpak gives them: the empty id, one element, or an element starting with a digit is refused")
    func applicationIDs() {
        for id in ["org.example.Editor", "org.gnome.Maps", "com.example.my_app-2"] { #expect(SecretPortal.isApplicationID(id), "\(id)") }
        for id in ["", "nodots", "1bad.start", "org..empty", "org.exa mple", String(repeating: "a.", count: 128) + "b"] {
            #expect(!SecretPortal.isApplicationID(id), "\(id)")
        }
    }

    @Test("The secret is written only to a descriptor open for writing whose reader is still there")
    func descriptors() throws {
        var ends: [Int32] = [0, 0]
        #expect(pipe(&ends) == 0)
        defer { ends.forEach { close($0) } }
        #expect(throws: Never.self) { try SecretService.checkWritable(ends[1]) }
        // The read end: not open for writing.
        #expect(throws: (any Error).self) { try SecretService.checkWritable(ends[0]) }
        var closed: [Int32] = [0, 0]
        #expect(pipe(&closed) == 0)
        close(closed[0])
        defer { close(closed[1]) }
        #expect(throws: (any Error).self) { try SecretService.checkWritable(closed[1]) }
    }
}
