#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CSystemdBus

/// Calling other services (the importer, reading gnome-keyring or KeePassXC): synchronous method
/// calls and waiting for one signal, on the calling thread, on a connection that is not being
/// served (``BusConnection/run()`` not running).
extension BusConnection {
    /// Calls `interface.member` on `destination` at `path` and returns the reply's arguments, or
    /// throws the error the service answered with. `timeout` in microseconds (0: sd-bus's 25 s).
    package func call(_ destination: String, _ path: String, _ interface: String, _ member: String,
                      _ values: [BusValue] = [], timeout: UInt64 = 0) throws(BusError) -> [BusValue] {
        var message: OpaquePointer?
        guard sd_bus_message_new_method_call(handle, &message, destination, path, interface, member) >= 0, let message else {
            throw .failed("cannot make a call to \(interface).\(member) at \(path)")
        }
        defer { sd_bus_message_unref(message) }
        guard BusMessage.append(message, values) else { throw .invalidArguments("the arguments of \(member) cannot be sent") }
        var error = sd_bus_error(name: nil, message: nil, _need_free: 0)
        var reply: OpaquePointer?
        let r = sd_bus_call(handle, message, timeout, &error, &reply)
        defer {
            sd_bus_error_free(&error)
            if let reply { sd_bus_message_unref(reply) }
        }
        guard r >= 0, let reply else {
            let name = error.name.map { String(cString: $0) } ?? "org.freedesktop.DBus.Error.Failed"
            let text = error.message.map { String(cString: $0) } ?? String(cString: strerror(-r))
            throw BusError(name, text)
        }
        // The reply may carry secrets (a plain session's, or ciphertext): wiped when freed.
        sd_bus_message_sensitive(reply)
        guard let arguments = BusMessage.arguments(reply) else { throw .failed("the reply of \(member) cannot be read") }
        return arguments
    }

    /// A property's value (`org.freedesktop.DBus.Properties.Get`), unwrapped from its variant.
    package func property(_ destination: String, _ path: String, _ interface: String, _ name: String) throws(BusError) -> BusValue {
        let reply = try call(destination, path, "org.freedesktop.DBus.Properties", "Get", [.string(interface), .string(name)])
        guard case .variant(let value)? = reply.first else { throw .failed("\(interface).\(name) is not a variant") }
        return value
    }

    /// Calls `start` and waits up to `seconds` for the signal `interface.member` from `path`, sent
    /// by the connection `sender` (a unique name; nil: anyone); returns its arguments, nil when it
    /// did not come in time.
    package func awaitSignal(_ path: String, _ interface: String, _ member: String, sender: String? = nil, seconds: Int,
                             after start: () throws(BusError) -> Void) throws(BusError) -> [BusValue]? {
        final class Box {
            let sender: String?
            var arguments: [BusValue]?
            init(sender: String?) { self.sender = sender }
        }
        let box = Box(sender: sender)
        var slot: OpaquePointer?
        let r = sd_bus_match_signal(handle, &slot, sender, path, interface, member, { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            let box = Unmanaged<Box>.fromOpaque(userdata).takeUnretainedValue()
            // The match rule names the sender too; checked here as well, so no other connection's
            // signal counts even if the daemon delivered it.
            if let expected = box.sender {
                guard let from = sd_bus_message_get_sender(message), String(cString: from) == expected else { return 0 }
            }
            box.arguments = BusMessage.arguments(message) ?? []
            return 0
        }, Unmanaged.passUnretained(box).toOpaque())
        guard r >= 0 else { throw .failed("cannot watch \(interface).\(member): \(String(cString: strerror(-r)))") }
        defer { sd_bus_slot_unref(slot) }
        try start()
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        let deadline = now.tv_sec + seconds
        while box.arguments == nil {
            let processed = sd_bus_process(handle, nil)
            guard processed >= 0 else { throw .failed("the session bus went away") }
            if processed > 0 { continue }
            clock_gettime(CLOCK_MONOTONIC, &now)
            guard now.tv_sec < deadline else { return nil }
            _ = sd_bus_wait(handle, 1_000_000)
        }
        return box.arguments
    }
}
