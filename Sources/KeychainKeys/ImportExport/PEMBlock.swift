import SwiftASN1

/// One `-----BEGIN LABEL-----` ... `-----END LABEL-----` block of a PEM text.
///
/// Decoding is swift-asn1's `PEMDocument`; this only finds where each block starts and ends, and
/// whether it carries RFC 1421 headers (`Proc-Type`, `DEK-Info`: OpenSSL's traditional
/// encrypted keys, which OpenSSL itself opens).
struct PEMBlock {
    let label: String
    /// The block's own lines, BEGIN and END included, each ending in a newline.
    let text: String
    /// Whether it has `Name: value` header lines before its base64 body.
    let hasHeaders: Bool

    /// The DER inside (nil for a block with headers, or one whose body is not base64).
    var der: [UInt8]? {
        guard !hasHeaders else { return nil }
        return try? PEMDocument(pemString: text).derBytes
    }

    /// Whether `bytes` look like PEM text: a BEGIN line somewhere in printable text.
    static func isPEM(_ bytes: [UInt8]) -> Bool {
        bytes.count >= 11 && String(decoding: bytes, as: UTF8.self).contains("-----BEGIN ")
    }

    /// The blocks of `text` in order; text between blocks is ignored, as OpenSSL ignores it.
    static func blocks(in text: String) -> [PEMBlock] {
        var found: [PEMBlock] = []
        var current: (label: String, lines: [Substring], headers: Bool)?
        for line in text.split(omittingEmptySubsequences: false, whereSeparator: { $0 == "\n" || $0 == "\r\n" }) {
            let trimmed = line.trimmingTrailingWhitespace
            if let open = current {
                current?.lines.append(trimmed)
                if trimmed == "-----END \(open.label)-----" {
                    found.append(PEMBlock(label: open.label, text: (open.lines + [trimmed]).map { $0 + "\n" }.joined(), hasHeaders: open.headers))
                    current = nil
                } else if open.lines.count >= 1, trimmed.contains(":"), !trimmed.hasPrefix("-----") {
                    current?.headers = true
                }
            } else if trimmed.hasPrefix("-----BEGIN "), trimmed.hasSuffix("-----"), trimmed.count > 16 {
                let label = String(trimmed.dropFirst(11).dropLast(5))
                current = (label, [trimmed], false)
            }
        }
        return found
    }

    /// PEM text of `der` under `label`, 64 columns, ending in a newline.
    static func text(label: String, der: [UInt8]) -> String {
        PEMDocument(type: label, derBytes: der).pemString + "\n"
    }
}

extension Substring {
    fileprivate var trimmingTrailingWhitespace: Substring {
        var text = self
        while text.last?.isWhitespace == true { text = text.dropLast() }
        while text.first?.isWhitespace == true { text = text.dropFirst() }
        return text
    }
}
