import Foundation
import KeychainModel
import Testing

/// The vocabulary every side shares, as bytes: the wire codec (integers, data, text, containers,
/// dictionaries), persistent references, item classes and how attribute values match.
@Suite struct WireCodecTests {
    @Test("Persistent references parse in both forms and refuse anything else")
    func persistentReferences() {
        let uuid = Data(repeating: 3, count: 16)
        #expect(PersistentReference(Data("genp".utf8) + uuid) == .uuid(.genericPassword, uuid))
        #expect(PersistentReference(Data("inet".utf8) + Data([0, 0, 0, 0, 0, 0, 1, 2])) == .rowID(.internetPassword, 258))
        #expect(PersistentReference.uuid(.genericPassword, uuid).bytes == Data("genp".utf8) + uuid)
        #expect(PersistentReference.rowID(.internetPassword, 258).bytes == Data("inet".utf8) + Data([0, 0, 0, 0, 0, 0, 1, 2]))
        #expect(PersistentReference.rowID(.key, -2).bytes == Data("keys".utf8) + Data([0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFE]))
        for itemClass in ItemClass.allCases {
            #expect(itemClass.asciiName == Array(itemClass.rawValue.utf8))
            #expect(PersistentReference(PersistentReference.uuid(itemClass, uuid).bytes) == .uuid(itemClass, uuid))
        }
        // On the wire: the bytes' length, then the bytes, as `Data` is written.
        for reference in [PersistentReference.uuid(.key, uuid), .rowID(.certificate, 1 << 40 | 7)] {
            var writer = ByteWriter()
            reference.write(to: &writer)
            var expected = ByteWriter()
            reference.bytes.write(to: &expected)
            #expect(writer.bytes == expected.bytes && reference.byteCount == reference.bytes.count)
        }
        var wire = ByteWriter()
        PersistentReference.rowID(.key, 258).write(to: &wire)
        #expect(wire.bytes == [12, 0, 0, 0] + Array("keys".utf8) + [0, 0, 0, 0, 0, 0, 1, 2])
        #expect(PersistentReference(Data("idnt".utf8) + uuid) == nil)
        #expect(PersistentReference(Data("cert".utf8) + uuid) == .uuid(.certificate, uuid))
        #expect(PersistentReference(Data("genp".utf8) + uuid.prefix(15)) == nil)
        #expect(PersistentReference(Data()) == nil)
    }

    @Test("Persistent references read from inside a message (the agent's wire form) and from a Data slice")
    func persistentReferencesInMessages() throws {
        let uuid = Data((1...16).map { UInt8($0) })
        for reference in [PersistentReference.uuid(.internetPassword, uuid), .rowID(.key, 1 << 40 | 7)] {
            // After other fields, so the reference's bytes are a slice that does not start at 0.
            var writer = ByteWriter()
            "before".write(to: &writer)
            reference.write(to: &writer)
            var reader = ByteReader(writer.bytes)
            #expect(try String(from: &reader) == "before")
            #expect(try PersistentReference(from: &reader) == reference)
            #expect(reader.remaining == 0)
            let framed = Data([9, 9]) + reference.bytes
            #expect(PersistentReference(framed.dropFirst(2)) == reference)
        }
        for bad in [Data("genq".utf8) + uuid, Data("genp".utf8) + uuid.prefix(10), Data([0xFF, 0xFE, 0, 0]) + uuid] {
            var reader = ByteReader(bad.wireBytes)
            let error = #expect(throws: CodecError.self) { try PersistentReference(from: &reader) }
            #expect(error?.code == .malformed)
        }
    }

    @Test("Match keys: a string and data with the same bytes are equal; numbers by value; kinds apart")
    func matchKeys() {
        #expect(AttributeValue.string("foo").matchKey(for: .blob) == AttributeValue.data(Data("foo".utf8)).matchKey(for: .blob))
        #expect(AttributeValue.string("foo").matchKey(for: .blob) != AttributeValue.string("FOO").matchKey(for: .blob))
        #expect(AttributeValue.number(80).matchKey(for: .number) != AttributeValue.string("http").matchKey(for: .number))
        #expect(AttributeValue.number(1).matchKey(for: .blob) == AttributeValue.data(Data([1, 0, 0, 0])).matchKey(for: .blob))
    }

    @Test("matches(_:as:) agrees with comparing match keys, for every pair of values and every kind")
    func matchesAgreesWithMatchKeys() {
        let date = Date(timeIntervalSinceReferenceDate: 12345.5)
        let values: [AttributeValue] = [
            .string("foo"), .string("FOO"), .string(""), .string("80"), .string("http"),
            // A prefix, a text with a NUL, and texts too long to be stored inline.
            .string("fo"), .string("foo\u{0}"), .string(String(repeating: "account-", count: 8)), .string(String(repeating: "account-", count: 8) + "x"),
            // The same text, precomposed and decomposed: equal as Swift strings, not as bytes.
            .string("caf\u{E9}"), .string("cafe\u{301}"),
            .data(Data("foo".utf8)), .data(Data()), .data(Data([1, 0, 0, 0])), .data(Data("caf\u{E9}".utf8)),
            .number(0), .number(1), .number(80), .number(-1), .number(1 << 40),
            .date(date), .date(date.addingTimeInterval(1)),
        ]
        for kind in [AttributeKind.blob, .data, .string, .number, .date] {
            for a in values {
                for b in values {
                    #expect(a.matches(b, as: kind) == (a.matchKey(for: kind) == b.matchKey(for: kind)), "\(kind): \(a) against \(b)")
                }
            }
        }
        #expect(!AttributeValue.string("caf\u{E9}").matches(.string("cafe\u{301}"), as: .string))
    }

    @Test("Stored and sent text must be valid UTF-8: every malformed sequence is refused, valid text (U+FFFD too) kept")
    func storedTextIsValidated() {
        let valid: [[UInt8]] = [[], Array("plain".utf8), Array("caf\u{E9} \u{1F511}".utf8), [0xEF, 0xBF, 0xBD], [0xF4, 0x8F, 0xBF, 0xBF]]
        for bytes in valid {
            #expect(String(exactUTF8: ArraySlice(bytes)) == String(decoding: bytes, as: UTF8.self))
        }
        let invalid: [[UInt8]] = [
            [0x80], [0xC3], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0xF8, 0x88, 0x80, 0x80, 0x80], [0xFF], Array("ok".utf8) + [0xE2, 0x82],
            // Repaired to U+FFFD and "a": as many bytes as the input, so only comparing them tells.
            [0xF0, 0x9F, 0x98, 0x61],
        ]
        for bytes in invalid {
            #expect(String(exactUTF8: ArraySlice(bytes)) == nil, "\(bytes)")
            #expect(String(validating: bytes, as: UTF8.self) == nil, "the reference refuses \(bytes) too")
        }
        // A slice that does not start at index 0.
        let padded: [UInt8] = [0xFF] + Array("name".utf8)
        #expect(String(exactUTF8: padded[1...]) == "name")
    }

    @Test("A dictionary has one encoding: its keys in sorted order, whatever order it was built in")
    func dictionaryEncodingIsCanonical() throws {
        let keys = (0..<40).map { "key-\($0 * 7 % 40)" }
        var forward: [String: AttributeValue] = [:]
        for key in keys { forward[key] = .string(key.uppercased()) }
        var backward: [String: AttributeValue] = [:]
        backward.reserveCapacity(500)
        for key in keys.reversed() { backward[key] = .string(key.uppercased()) }
        var a = ByteWriter(), b = ByteWriter()
        forward.write(to: &a)
        backward.write(to: &b)
        #expect(a.bytes == b.bytes)
        // Read back pair by pair: the keys come in ascending order, each with its own value.
        var reader = ByteReader(a.bytes)
        #expect(try reader.count() == keys.count)
        var seen: [String] = []
        for _ in keys {
            let key = try String(from: &reader)
            #expect(try AttributeValue(from: &reader) == .string(key.uppercased()))
            seen.append(key)
        }
        #expect(seen == keys.sorted())
        var again = ByteReader(b.bytes)
        #expect(try [String: AttributeValue](from: &again) == forward)
    }

    @Test("The writer puts integers little-endian, copies Data (a slice too) whole, and hands its bytes over once")
    func writerLayout() throws {
        var writer = ByteWriter()
        writer.u32(0x0403_0201)
        writer.u64(0x0C0B_0A09_0807_0605)
        let data = Data([0xAA, 0xBB, 0xCC, 0xDD])
        writer.raw(data[1...])
        writer.raw(Data())
        let expected: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 0xBB, 0xCC, 0xDD]
        #expect(writer.bytes == expected)
        var reader = ByteReader(writer.bytes)
        #expect(try reader.u32() == 0x0403_0201)
        #expect(try reader.u64() == 0x0C0B_0A09_0807_0605)
        #expect(writer.takeBytes() == expected)
        #expect(writer.bytes.isEmpty)
        writer.u16(0x0201)
        #expect(writer.bytes == [1, 2])
        var short = ByteReader(writer.bytes)
        #expect(try short.u16() == 0x0201)
    }

    @Test("Data on the wire is its length, then its bytes, and reads back whole: empty, and after other fields")
    func dataOnTheWire() throws {
        var writer = ByteWriter()
        "before".write(to: &writer)
        Data().write(to: &writer)
        Data([1, 2, 3]).write(to: &writer)
        #expect(Array(writer.bytes.suffix(11)) == [0, 0, 0, 0, 3, 0, 0, 0, 1, 2, 3])
        var reader = ByteReader(writer.bytes)
        #expect(try String(from: &reader) == "before")
        #expect(try Data(from: &reader) == Data())
        let read = try Data(from: &reader)
        #expect(read == Data([1, 2, 3]) && read.startIndex == 0)
        #expect(reader.remaining == 0)
        var short = ByteReader([5, 0, 0, 0, 1, 2])
        #expect(throws: CodecError.self) { try Data(from: &short) }
        var taking = ByteReader([9, 8, 7, 6])
        #expect(try taking.takeData(1) == Data([9]))
        let rest = try taking.takeData(3)
        #expect(rest == Data([8, 7, 6]) && rest.startIndex == 0)
        #expect(throws: CodecError.self) { try taking.takeData(1) }
        #expect(try taking.takeData(0) == Data())
        let message: [UInt8] = [1, 2, 3, 4, 5]
        let copied = Data(copying: message[1..<4])
        #expect(copied == Data([2, 3, 4]) && copied.startIndex == 0)
        #expect(Data(copying: message[2..<2]).isEmpty)
    }

    @Test("The writer's copies of arrays, slices, buffers, text and zeros write what its generic copy writes")
    func writerTypedCopies() throws {
        let array: [UInt8] = [1, 2, 3, 250]
        let text = "añ✓"
        var typed = ByteWriter(), generic = ByteWriter()
        typed.raw(array)
        typed.raw(array[1...2])
        array.withUnsafeBytes { typed.raw($0) }
        typed.raw(text.utf8)
        typed.zeros(5)
        typed.zeros(0)
        func appendGenerically<C: Collection>(_ c: C) where C.Element == UInt8 { generic.raw(c) }
        appendGenerically(array)
        appendGenerically(array[1...2])
        appendGenerically(array)
        appendGenerically(text.utf8)
        appendGenerically(repeatElement(0, count: 5))
        #expect(typed.bytes == generic.bytes)
        #expect(typed.bytes == [1, 2, 3, 250, 2, 3, 1, 2, 3, 250, 0x61, 0xC3, 0xB1, 0xE2, 0x9C, 0x93, 0, 0, 0, 0, 0])
    }

    @Test("An item class read from bytes is the one its text names, and nothing else is one; on the wire too")
    func itemClassFromBytes() throws {
        for itemClass in ItemClass.allCases {
            #expect(ItemClass(utf8: Array(itemClass.rawValue.utf8)[...]) == itemClass)
            // From the middle of a buffer, as the agent reads it.
            #expect(ItemClass(utf8: Array(("xx" + itemClass.rawValue + "y").utf8)[2..<6]) == itemClass)
        }
        for text in ["", "gen", "genpp", "GENP", "gene", "inet ", "key", "cer\u{0}", "ceru"] {
            #expect(ItemClass(utf8: Array(text.utf8)[...]) == nil && ItemClass(rawValue: text) == nil)
        }
        #expect(ItemClass(utf8: [0x67, 0x65, 0x6E, 0xF0][...]) == nil)
        var writer = ByteWriter()
        ItemClass.certificate.write(to: &writer)
        "cerT".write(to: &writer)
        var reader = ByteReader(writer.bytes)
        #expect(try ItemClass(from: &reader) == .certificate)
        #expect(throws: CodecError(.malformed, "an unknown item class")) { _ = try ItemClass(from: &reader) }
        // A dictionary of none reads back as empty; of some, as they were.
        var pairs = ByteWriter()
        [String: AttributeValue]().write(to: &pairs)
        ["acct": AttributeValue.string("a")].write(to: &pairs)
        var read = ByteReader(pairs.bytes)
        #expect(try [String: AttributeValue](from: &read).isEmpty)
        #expect(try [String: AttributeValue](from: &read) == ["acct": .string("a")])
    }
}
