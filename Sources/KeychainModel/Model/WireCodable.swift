import FoundationEssentials

// The engine's value types as the agent protocol carries them (docs/agent-protocol.md).
// Explicit coding keys and tags, so the wire format does not change when Swift names do.

extension ItemClass: Codable {}
extension KeyClass: Codable {}

extension AttributeValue: Codable {
    private enum CodingKeys: String, CodingKey { case s, d, n, t }

    package init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        if let s = try container.decodeIfPresent(String.self, forKey: .s) { self = .string(s) }
        else if let d = try container.decodeIfPresent(Data.self, forKey: .d) { self = .data(d) }
        else if let n = try container.decodeIfPresent(Int64.self, forKey: .n) { self = .number(n) }
        else if let t = try container.decodeIfPresent(Double.self, forKey: .t) { self = .date(Date(timeIntervalSinceReferenceDate: t)) }
        else { throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "no attribute value")) }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .string(let s): try container.encode(s, forKey: .s)
        case .data(let d): try container.encode(d, forKey: .d)
        case .number(let n): try container.encode(n, forKey: .n)
        case .date(let t): try container.encode(t.timeIntervalSinceReferenceDate, forKey: .t)
        }
    }
}

extension PersistentReference: Codable {
    package init(from decoder: any Decoder) throws {
        let bytes = try decoder.singleValueContainer().decode(Data.self)
        guard let reference = PersistentReference(bytes) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "not a persistent reference"))
        }
        self = reference
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(bytes)
    }
}

