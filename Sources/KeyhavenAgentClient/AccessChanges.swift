import KeychainModel

/// A change of items' access objects.
package struct AccessChange: Sendable {
    /// Programs to trust, by path (the agent hashes them).
    package var trust: [String] = []
    /// Programs to trust no more, by path (entries of that path or of that file's digest).
    package var untrust: [String] = []
    /// Open the items to every application (true) or close them to the listed ones (false).
    package var anyApplication: Bool?

    package init(trust: [String] = [], untrust: [String] = [], anyApplication: Bool? = nil) {
        self.trust = trust
        self.untrust = untrust
        self.anyApplication = anyApplication
    }
}

/// A change of the groups granted to one application.
package struct GrantChange: Sendable {
    package var application: String
    package var groups: [String]
    package var revoke: Bool

    package init(application: String, groups: [String], revoke: Bool) {
        self.application = application
        self.groups = groups
        self.revoke = revoke
    }
}

/// The access groups granted to one application.
package struct ApplicationGrant: Sendable, Equatable {
    package var application: TrustedApplication
    package var groups: [String]

    package init(application: TrustedApplication, groups: [String]) {
        self.application = application
        self.groups = groups
    }
}

extension AccessChange: WireCodable {
    package func write(to writer: inout ByteWriter) {
        writer.array(trust)
        writer.array(untrust)
        writer.optional(anyApplication)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(trust: try reader.array(of: String.self), untrust: try reader.array(of: String.self),
                  anyApplication: try reader.optional(Bool.self))
    }
}

extension GrantChange: WireCodable {
    package func write(to writer: inout ByteWriter) {
        application.write(to: &writer)
        writer.array(groups)
        revoke.write(to: &writer)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(application: try String(from: &reader), groups: try reader.array(of: String.self), revoke: try Bool(from: &reader))
    }
}

extension ApplicationGrant: WireCodable {
    package func write(to writer: inout ByteWriter) {
        application.write(to: &writer)
        writer.array(groups)
    }

    package init(from reader: inout ByteReader) throws(CodecError) {
        self.init(application: try TrustedApplication(from: &reader), groups: try reader.array(of: String.self))
    }
}
