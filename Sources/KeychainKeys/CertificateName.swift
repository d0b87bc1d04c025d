import SwiftASN1

/// A distinguished name (RFC 5280's `Name`) read from its DER with swift-asn1: its attributes by
/// relative distinguished name, and Apple's normalized form of it.
struct CertificateName: Sendable {
    struct Attribute: Sendable {
        let type: ASN1ObjectIdentifier
        let value: ASN1Node
        /// The value, when it is a PrintableString, UTF8String or IA5String.
        let text: String?
    }

    /// The name's DER, as the certificate holds it.
    let der: [UInt8]
    let relativeNames: [[Attribute]]

    static let commonName: ASN1ObjectIdentifier = [2, 5, 4, 3]
    static let organizationName: ASN1ObjectIdentifier = [2, 5, 4, 10]
    static let organizationalUnitName: ASN1ObjectIdentifier = [2, 5, 4, 11]
    static let emailAddress: ASN1ObjectIdentifier = [1, 2, 840, 113_549, 1, 9, 1]

    /// Reads `der`; a name that does not read has no attributes (OpenSSL has parsed it already).
    init(der: [UInt8]) {
        self.der = der
        self.relativeNames = (try? Self.parse(der)) ?? []
    }

    static func parse(_ der: [UInt8]) throws -> [[Attribute]] {
        try DER.sequence(DER.parse(der), identifier: .sequence) { sets in
            var relativeNames: [[Attribute]] = []
            while let set = sets.next() {
                relativeNames.append(try DER.set(set, identifier: .set) { members in
                    var attributes: [Attribute] = []
                    while let member = members.next() {
                        attributes.append(try DER.sequence(member, identifier: .sequence) { nodes in
                            let type = try ASN1ObjectIdentifier(derEncoded: &nodes)
                            guard let value = nodes.next() else { throw ASN1Error.invalidASN1Object(reason: "an attribute without a value") }
                            return Attribute(type: type, value: value, text: Self.text(value))
                        })
                    }
                    return attributes
                })
            }
            return relativeNames
        }
    }

    static func text(_ node: ASN1Node) -> String? {
        switch node.identifier {
        case .utf8String: return (try? ASN1UTF8String(derEncoded: node)).map(String.init)
        case .printableString: return (try? ASN1PrintableString(derEncoded: node)).map(String.init)
        case .ia5String: return (try? ASN1IA5String(derEncoded: node)).map(String.init)
        default: return nil
        }
    }

    /// The text values of the attributes of `type`, in order.
    func values(of type: ASN1ObjectIdentifier) -> [String] {
        relativeNames.joined().filter { $0.type == type }.compactMap(\.text)
    }

    /// Apple's normalized name: text values upper-cased, trimmed, inner white space collapsed and
    /// re-encoded as UTF8String; other values as they are.
    var normalized: [UInt8] {
        var serializer = DER.Serializer()
        try? serializer.appendConstructedNode(identifier: .sequence) { sequence in
            for relativeName in relativeNames {
                try sequence.serializeSetOf(relativeName.map(NormalizedAttribute.init))
            }
        }
        return serializer.serializedBytes
    }

    struct NormalizedAttribute: DERSerializable {
        let attribute: Attribute

        func serialize(into coder: inout DER.Serializer) throws {
            try coder.appendConstructedNode(identifier: .sequence) { pair in
                try pair.serialize(attribute.type)
                if let text = attribute.text {
                    let folded = text.uppercased().split(whereSeparator: \.isWhitespace).joined(separator: " ")
                    try pair.serialize(ASN1UTF8String(folded))
                } else {
                    pair.serialize(attribute.value)
                }
            }
        }
    }

    /// The content of a DER node (a SEQUENCE's members, an INTEGER's bytes) without its header.
    static func content(_ der: [UInt8]) -> [UInt8] {
        guard let node = try? DER.parse(der) else { return der }
        switch node.content {
        case .constructed(let children): return children.flatMap { Array($0.encodedBytes) }
        case .primitive(let bytes): return Array(bytes)
        }
    }
}
