import FoundationEssentials
import KeychainModel

/// What the SSH agent in keyhavend says of its keys' uses (``AgentRequest/sshUses(revoke:)``):
/// the standing approvals the user gave at a confirming key's prompt, and each key's last
/// signature. Dates are seconds since 1970, whole milliseconds.
package struct SSHUseReport: Sendable, Equatable {
    /// One standing approval: which key, where it holds, and until when.
    package struct Approval: Sendable, Equatable {
        package var id: UInt64
        /// The key's SHA-256 fingerprint and comment.
        package var key: String
        package var comment: String
        /// Where it holds, in words: "logins to github.com (SHA256:…)", "git signing", "ssh (1234)".
        package var scope: String
        package var granted: Date
        /// When it ends by itself; nil for a process's, which ends with the process.
        package var expires: Date?

        package init(id: UInt64, key: String, comment: String, scope: String, granted: Date, expires: Date?) {
            (self.id, self.key, self.comment, self.scope, self.granted, self.expires) = (id, key, comment, scope, granted, expires)
        }
    }

    /// One key's last signature.
    package struct LastUse: Sendable, Equatable {
        package var key: String
        package var comment: String
        package var at: Date
        /// The process chain that asked.
        package var by: String
        /// Where the signature went.
        package var target: String
        /// "prompt", "approval" or "no prompt".
        package var allowed: String

        package init(key: String, comment: String, at: Date, by: String, target: String, allowed: String) {
            (self.key, self.comment, self.at, self.by, self.target, self.allowed) = (key, comment, at, by, target, allowed)
        }
    }

    package var approvals: [Approval]
    package var lastUses: [LastUse]

    package init(approvals: [Approval], lastUses: [LastUse]) {
        (self.approvals, self.lastUses) = (approvals, lastUses)
    }

    /// Text that clients and keys named (a comment, a process's name, a host), on one line:
    /// each control character a space, so that it cannot end or redraw the line it is shown on.
    package static func oneLine(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.properties.generalCategory == .control ? " " : Character($0) })
    }
}

/// Which standing approvals to revoke.
package enum SSHRevocation: Sendable, Equatable {
    case approval(UInt64)
    case all
}

extension SSHRevocation: WireCodable {
    package func write(to writer: inout ByteWriter) {
        switch self {
        case .approval(let id): writer.u8(1); id.write(to: &writer)
        case .all: writer.u8(2)
        }
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        switch try reader.u8() {
        case 1: self = .approval(try UInt64(from: &reader))
        case 2: self = .all
        default: throw CodecError(.malformed, "an unknown revocation")
        }
    }
}

extension SSHUseReport.Approval: WireCodable {
    package func write(to writer: inout ByteWriter) {
        id.write(to: &writer); key.write(to: &writer); comment.write(to: &writer); scope.write(to: &writer)
        SSHUseReport.millisecondsSince1970(granted).write(to: &writer)
        writer.optional(expires.map(SSHUseReport.millisecondsSince1970))
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(id: try UInt64(from: &reader), key: try String(from: &reader), comment: try String(from: &reader),
                  scope: try String(from: &reader), granted: SSHUseReport.date(try Int64(from: &reader)),
                  expires: try reader.optional(Int64.self).map(SSHUseReport.date))
    }
}

extension SSHUseReport.LastUse: WireCodable {
    package func write(to writer: inout ByteWriter) {
        key.write(to: &writer); comment.write(to: &writer); SSHUseReport.millisecondsSince1970(at).write(to: &writer)
        by.write(to: &writer); target.write(to: &writer); allowed.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(key: try String(from: &reader), comment: try String(from: &reader), at: SSHUseReport.date(try Int64(from: &reader)),
                  by: try String(from: &reader), target: try String(from: &reader), allowed: try String(from: &reader))
    }
}

extension SSHUseReport: WireCodable {
    package func write(to writer: inout ByteWriter) {
        writer.array(approvals)
        writer.array(lastUses)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(approvals: try reader.array(of: Approval.self), lastUses: try reader.array(of: LastUse.self))
    }

    static func millisecondsSince1970(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }

    static func date(_ milliseconds: Int64) -> Date {
        Date(timeIntervalSince1970: Double(milliseconds) / 1000)
    }
}
