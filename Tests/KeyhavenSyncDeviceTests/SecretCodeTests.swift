import KeyhavenSyncCore
import KeyhavenSyncDevice
import Testing

/// Recovery keys and pairing codes: their text, what reading it refuses, what they derive.
struct SecretCodeTests {
    @Test("A recovery key reads back from its text in any case and grouping; it always derives the same recovery device")
    func recoveryKey() throws {
        let key = RecoveryKey()
        #expect(key.text.count == 64 && key.text.split(separator: "-").count == 13)
        let again = try #require(RecoveryKey(text: key.text.lowercased().replacingOccurrences(of: "-", with: " ")))
        #expect(again.identity().id == key.identity().id && again.identity().publicKeys == key.identity().publicKeys)
        #expect(RecoveryKey().identity().id != key.identity().id)
        for bad in ["", String(key.text.dropLast()), key.text + "A", key.text.replacingOccurrences(of: "A", with: "1"), "0" + key.text.dropFirst()] {
            #expect(RecoveryKey(text: bad) == nil || bad == key.text, "\(bad)")
        }
    }

    @Test("A pairing code is 160 bits in 32 letters; its slot comes from the first 32 bits; its MAC refuses another code, label, question and any change")
    func pairingCode() throws {
        let code = PairingCode()
        let letters = code.text.filter { $0 != "-" }
        #expect(letters.count == 32)
        let same = try #require(PairingCode(text: code.text))
        #expect(same.slot == code.slot && PairingCode().slot != code.slot)
        // A code mistyped at its end: the same slot (the inviting device hears it), another MAC key.
        let last = letters.last!, other: Character = last == "A" ? "B" : "A"
        let mistyped = try #require(PairingCode(text: String(letters.dropLast()) + String(other)))
        #expect(mistyped.slot == code.slot)
        let question = Array("question".utf8)
        let sealed = code.seal(Array("answer".utf8), label: "answer", answering: question)
        #expect(same.open(sealed, label: "answer", answering: question) == Array("answer".utf8))
        #expect(PairingCode().open(sealed, label: "answer", answering: question) == nil)
        #expect(mistyped.open(sealed, label: "answer", answering: question) == nil)
        #expect(same.open(sealed, label: "join", answering: question) == nil)
        #expect(same.open(sealed, label: "answer", answering: Array("other".utf8)) == nil)
        for index in sealed.indices {
            var changed = sealed
            changed[index] ^= 1
            #expect(same.open(changed, label: "answer", answering: question) == nil)
        }
        #expect(PairingCode(text: "ABCD") == nil && PairingCode(text: code.text + "A") == nil)
    }
}
