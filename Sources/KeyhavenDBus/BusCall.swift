import CSystemdBus
import KeychainModel

/// One method call, answered once, maybe later and from another thread's work: ``reply(_:sensitive:)``
/// and ``fail(_:)`` queue the answer to the bus thread.
package final class BusCall: @unchecked Sendable {
    // @unchecked: `message` is referenced, used and released on the bus thread only.
    private let message: OpaquePointer
    private let connection: BusConnection
    package let path: String
    package let interface: String
    package let member: String
    /// The sender's unique name (`:1.42`).
    package let sender: String
    package let signature: String
    /// The arguments; nil when they could not be read.
    package let arguments: [BusValue]?
    /// The sender's process id, as the bus daemon knows it.
    package let senderPID: Int32?

    /// On the bus thread, in the message handler.
    init(message: OpaquePointer, connection: BusConnection) {
        self.message = sd_bus_message_ref(message)
        self.connection = connection
        func text(_ p: UnsafePointer<CChar>?) -> String { p.map { String(cString: $0) } ?? "" }
        path = text(sd_bus_message_get_path(message))
        interface = text(sd_bus_message_get_interface(message))
        member = text(sd_bus_message_get_member(message))
        sender = text(sd_bus_message_get_sender(message))
        signature = text(sd_bus_message_get_signature(message, 1))
        arguments = BusMessage.arguments(message)
        senderPID = connection.senderPID(message)
    }

    /// Answers with `values`; `sensitive` marks the reply to be wiped when sd-bus frees it (a
    /// secret in it).
    package func reply(_ values: [BusValue], sensitive: Bool = false) {
        connection.perform { [self] connection in
            var reply: OpaquePointer?
            defer { sd_bus_message_unref(message) }
            guard sd_bus_message_new_method_return(message, &reply) >= 0, let reply else { return }
            defer { sd_bus_message_unref(reply) }
            if sensitive { sd_bus_message_sensitive(reply) }
            guard BusMessage.append(reply, values) else {
                var error = sd_bus_error()
                sd_bus_error_set(&error, "org.freedesktop.DBus.Error.Failed", "the reply could not be built")
                sd_bus_reply_method_error(message, &error)
                sd_bus_error_free(&error)
                return
            }
            sd_bus_send(connection.handle, reply, nil)
        }
    }

    /// Answers with a D-Bus error.
    package func fail(_ error: BusError) {
        connection.perform { [self] _ in
            defer { sd_bus_message_unref(message) }
            var busError = sd_bus_error()
            sd_bus_error_set(&busError, error.name, error.message)
            sd_bus_reply_method_error(message, &busError)
            sd_bus_error_free(&busError)
        }
    }
}

/// A D-Bus error: its name (`org.freedesktop.Secret.Error.IsLocked`) and a message without
/// secrets in it.
package struct BusError: Error, Sendable, Equatable {
    package let name: String
    package let message: String
    /// The keychain error it stands for, when it is one: callers tell errors apart by it.
    package private(set) var cause: StoreError.Code?

    package init(_ name: String, _ message: String) {
        self.name = name
        self.message = message
    }

    /// Whether the keychain refused a write as a duplicate of another item.
    package var isDuplicate: Bool { cause == .duplicateItem }

    package static func invalidArguments(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.InvalidArgs", message) }
    package static func noSuchObject(_ path: String) -> BusError { BusError("org.freedesktop.Secret.Error.NoSuchObject", "no such object: \(path)") }
    package static func unknownObject(_ path: String) -> BusError { BusError("org.freedesktop.DBus.Error.UnknownObject", "no object at \(path)") }
    package static func unknownMethod(_ interface: String, _ member: String, _ signature: String) -> BusError {
        BusError("org.freedesktop.DBus.Error.UnknownMethod", "no method \(interface).\(member)(\(signature)) here")
    }
    package static func isLocked(_ what: String) -> BusError { BusError("org.freedesktop.Secret.Error.IsLocked", "\(what) is locked") }
    package static let noSession = BusError("org.freedesktop.Secret.Error.NoSession", "no such session, or it is not the caller's")
    package static func notSupported(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.NotSupported", message) }
    package static func accessDenied(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.AccessDenied", message) }
    package static func failed(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.Failed", message) }
    package static func limitsExceeded(_ message: String) -> BusError { BusError("org.freedesktop.DBus.Error.LimitsExceeded", message) }

    /// The D-Bus form of a keychain error.
    package init(_ error: StoreError) {
        switch error.code {
        case .interactionNotAllowed where error.reason == .keychainLocked: self = .isLocked("the collection")
        case .itemNotFound: self = BusError("org.freedesktop.Secret.Error.NoSuchObject", error.message)
        case .interactionNotAllowed, .authFailed, .missingEntitlement, .userCanceled:
            self = .accessDenied(error.message)
        case .invalidParameter, .dataTooLarge, .duplicateItem, .noSuchAttribute: self = .invalidArguments(error.message)
        default: self = .failed(error.message)
        }
        cause = error.code
    }
}
