import Foundation
import Testing
@testable import KeychainStore

@Suite struct CodecTests {
    static let sample: [String: AttributeValue] = [
        "acct": .string("alice"), "svce": .data(Data([0, 1, 2, 255])), "port": .number(-443),
        "cdat": .date(Date(timeIntervalSinceReferenceDate: 123_456.789)), "labl": .string("ünïcödé ✓"), "gena": .data(Data()),
    ]

    @Test("Metadata round-trips every kind of value, with and without an access control")
    func metadataRoundTrip() throws {
        for flags in [nil, UInt64(1 << 31 | 1)] as [UInt64?] {
            let metadata = ItemMetadata(attributes: Self.sample, secretTag: Data(repeating: 9, count: 16), hasSecret: true,
                                        accessControlFlags: flags)
            #expect(try ItemMetadata(decoding: metadata.encoded()) == metadata)
        }
    }

    @Test("Encoding is deterministic (sorted names)")
    func deterministic() {
        let a = ItemMetadata(attributes: Self.sample, secretTag: Data(count: 16), hasSecret: false, accessControlFlags: nil)
        var reversed: [String: AttributeValue] = [:]
        for key in Self.sample.keys.sorted().reversed() { reversed[key] = Self.sample[key] }
        let b = ItemMetadata(attributes: reversed, secretTag: Data(count: 16), hasSecret: false, accessControlFlags: nil)
        #expect(a.encoded() == b.encoded())
    }

    @Test("Every truncation of an encoding is refused with a CodecError, never a crash")
    func truncations() {
        let bytes = ItemMetadata(attributes: Self.sample, secretTag: Data(count: 16), hasSecret: true, accessControlFlags: 5).encoded()
        for length in 0..<bytes.count {
            #expect(throws: CodecError.self) { try ItemMetadata(decoding: Array(bytes.prefix(length))) }
        }
        #expect(throws: CodecError.self) { try ItemMetadata(decoding: bytes + [0]) }
    }

    @Test("Random bytes never crash the decoders")
    func randomInput() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let count = Int.random(in: 0..<200, using: &generator)
            var bytes = (0..<count).map { _ in UInt8.random(in: 0...255, using: &generator) }
            if !bytes.isEmpty && Bool.random() { bytes[0] = 1 }
            // Whatever decodes must be exactly what the bytes say: no lenient parse of garbage.
            if let metadata = try? ItemMetadata(decoding: bytes) { #expect((try? ItemMetadata(decoding: metadata.encoded())) == metadata) }
            if let content = try? Padding.unpad(bytes) { #expect(content == Array(bytes[4..<(4 + content.count)])) }
            if let reference = PersistentReference(Data(bytes)) { #expect(reference.bytes == Data(bytes)) }
        }
    }

    @Test("Padding hides the exact length and round-trips; non-zero padding is refused")
    func padding() throws {
        for length in [0, 1, 27, 28, 29, 100] {
            let content = [UInt8](repeating: 0xAB, count: length)
            let padded = Padding.pad(content, block: 32)
            #expect(padded.count % 32 == 0)
            #expect(try Padding.unpad(padded) == content)
        }
        #expect(Padding.pad([1], block: 32).count == Padding.pad([UInt8](repeating: 1, count: 20), block: 32).count)
        var bad = Padding.pad([1, 2, 3], block: 32)
        bad[bad.count - 1] = 1
        #expect(throws: CodecError.self) { try Padding.unpad(bad) }
    }

    @Test("Random bytes: every length, every position random (drawn eight at a time)")
    func randomBytes() {
        for count in 0...40 { #expect(KeychainCrypto.randomBytes(count).count == count) }
        // Over 64 draws of 19 bytes, each position (the last, partial word's too) takes many values.
        let draws = (0..<64).map { _ in Array(KeychainCrypto.randomBytes(19)) }
        for position in 0..<19 {
            #expect(Set(draws.map { $0[position] }).count > 32, "position \(position) barely varies")
        }
        #expect(Set(draws).count == 64)
    }

    @Test("Attributes inside an encrypted blob have the layout docs/file-format.md gives, byte for byte")
    func attributeLayout() throws {
        var writer = ByteWriter()
        AttributeCodec.encode(["labl": .string("é"), "acct": .data(Data([9])), "port": .number(-2)], into: &writer)
        let expected: [UInt8] = [3, 0]  // u16 count
            + [4] + Array("acct".utf8) + [0x64, 1, 0, 0, 0, 9]
            + [4] + Array("labl".utf8) + [0x73, 2, 0, 0, 0, 0xC3, 0xA9]
            + [4] + Array("port".utf8) + [0x6E, 8, 0, 0, 0, 0xFE, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF]
        #expect(writer.bytes == expected)
        var reader = ByteReader(writer.bytes)
        #expect(try AttributeCodec.decode(from: &reader) == ["labl": .string("é"), "acct": .data(Data([9])), "port": .number(-2)])
    }

    @Test("Padding is the content's length, the content, then zeros to a whole number of blocks")
    func paddingLayout() throws {
        #expect(Padding.pad([7, 8], block: 8) == [2, 0, 0, 0, 7, 8, 0, 0])
        #expect(Padding.pad([1, 2, 3, 4], block: 8) == [4, 0, 0, 0, 1, 2, 3, 4])
        #expect(Padding.pad([], block: 4) == [0, 0, 0, 0])
        let long = Padding.pad([UInt8](repeating: 5, count: 61), block: 32)
        #expect(long.count == 96 && long[4..<65].allSatisfy { $0 == 5 } && long[65...].allSatisfy { $0 == 0 })
    }

}
