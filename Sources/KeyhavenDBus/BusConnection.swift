#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import CSystemdBus
import KeychainModel
import Synchronization

/// A connection to the session bus through sd-bus, served by one thread (``run()``): sd-bus
/// objects belong to one thread, so other threads hand it work with ``perform(_:)``.
package final class BusConnection: @unchecked Sendable {
    // @unchecked: `bus` is touched on the bus thread only; the rest is a Mutex or immutable.
    private let bus: OpaquePointer
    /// An eventfd the bus thread polls beside the bus: written when work is queued.
    private let wake: Int32
    private let queued = Mutex<[@Sendable (BusConnection) -> Void]>([])
    private let stopped = Atomic<Bool>(false)
    /// sd-bus's registrations (the provider's object tree, the matches), released when served no more.
    var slots: [OpaquePointer?] = []
    /// The handlers of ``watchSignals(sender:path:interface:member:_:)``, kept while their slots are.
    var signalHandlers: [SignalHandler] = []
    private var onCall: ((BusCall) -> Void)?
    private var onClientGone: ((String) -> Void)?
    private var onClientAppeared: ((String, Int32) -> Void)?

    /// Connects to the session bus at `address` (D-Bus's address form, `unix:path=...`); nil:
    /// `DBUS_SESSION_BUS_ADDRESS` (sd-bus's user bus).
    package init(address: String? = nil) throws(StoreError) {
        var bus: OpaquePointer?
        var r: Int32
        if let address {
            r = sd_bus_new(&bus)
            if r >= 0 { r = sd_bus_set_address(bus, address) }
            if r >= 0 { r = sd_bus_set_bus_client(bus, 1) }
            if r >= 0 { r = sd_bus_start(bus) }
            if r < 0, bus != nil { bus = sd_bus_unref(bus) }
        } else {
            r = sd_bus_open_user(&bus)
        }
        guard r >= 0, let bus else {
            throw StoreError(.notAvailable, "cannot connect to \(address.map { "the bus at \($0)" } ?? "the session bus"): \(String(cString: strerror(-r)))")
        }
        self.bus = bus
        wake = kh_bus_eventfd()
    }

    deinit {
        for slot in slots { sd_bus_slot_unref(slot) }
        sd_bus_flush_close_unref(bus)
        close(wake)
    }

    /// Claims a well-known name, without replacing or queueing behind its owner: false when
    /// another connection owns it.
    package func claim(_ name: String) throws(StoreError) -> Bool {
        let r = sd_bus_request_name(bus, name, 0)
        if r == -EEXIST { return false }
        guard r >= 0 || r == -EALREADY else {
            throw StoreError(.notAvailable, "cannot claim \(name) on the session bus: \(String(cString: strerror(-r)))")
        }
        return true
    }

    /// Delivers every method call to `path` and below to `onCall` (on the bus thread), the unique
    /// names that join the bus, with their process, to `onClientAppeared` (at once, on the bus
    /// thread: the names already there when this is called too), and those that leave it to
    /// `onClientGone`.
    package func serve(_ path: String, onCall: @escaping (BusCall) -> Void, onClientAppeared: @escaping (String, Int32) -> Void,
                       onClientGone: @escaping (String) -> Void) throws(StoreError) {
        self.onCall = onCall
        self.onClientGone = onClientGone
        self.onClientAppeared = onClientAppeared
        let me = Unmanaged.passUnretained(self).toOpaque()
        var slot: OpaquePointer?
        var r = sd_bus_add_fallback(bus, &slot, path, Self.deliverCall, me)
        guard r >= 0 else { throw StoreError(.notAvailable, "cannot serve \(path): \(String(cString: strerror(-r)))") }
        slots.append(slot)
        r = sd_bus_match_signal(bus, &slot, "org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                                "NameOwnerChanged", { message, userdata, _ in
            guard let message, let userdata, let arguments = BusMessage.arguments(message), arguments.count == 3,
                  let name = arguments[0].stringValue, let oldOwner = arguments[1].stringValue,
                  let newOwner = arguments[2].stringValue, name.hasPrefix(":") else { return 0 }
            let connection = Unmanaged<BusConnection>.fromOpaque(userdata).takeUnretainedValue()
            if newOwner.isEmpty {
                connection.onClientGone?(name)
            } else if oldOwner.isEmpty, let pid = connection.pid(of: name) {
                connection.onClientAppeared?(name, pid)
            }
            return 0
        }, me)
        guard r >= 0 else { throw StoreError(.notAvailable, "cannot watch the bus's clients: \(String(cString: strerror(-r)))") }
        slots.append(slot)
        // The names already on the bus (the client whose call started this provider among them).
        var acquired: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?
        guard sd_bus_list_names(bus, &acquired, nil) >= 0, let acquired else { return }
        var index = 0
        while let entry = acquired[index] {
            let name = String(cString: entry)
            free(entry)
            if name.hasPrefix(":"), let pid = pid(of: name) { onClientAppeared(name, pid) }
            index += 1
        }
        free(acquired)
    }

    /// sd-bus's handler of the served paths: each method call to ``onCall``.
    private static let deliverCall: sd_bus_message_handler_t = { message, userdata, _ in
            guard let message, let userdata else { return 0 }
            let connection = Unmanaged<BusConnection>.fromOpaque(userdata).takeUnretainedValue()
            var type: UInt8 = 0
            guard sd_bus_message_get_type(message, &type) >= 0, type == UInt8(SD_BUS_MESSAGE_METHOD_CALL) else { return 0 }
            connection.onCall?(BusCall(message: message, connection: connection))
            return 1
        }

    /// Delivers the method calls to `path` and below to the handler ``serve(_:onCall:onClientAppeared:onClientGone:)``
    /// set, too; after it.
    package func serveAlso(_ path: String) throws(StoreError) {
        var slot: OpaquePointer?
        let r = sd_bus_add_fallback(bus, &slot, path, Self.deliverCall, Unmanaged.passUnretained(self).toOpaque())
        guard r >= 0 else { throw StoreError(.notAvailable, "cannot serve \(path): \(String(cString: strerror(-r)))") }
        slots.append(slot)
    }

    /// The unique name of the connection that owns the well-known `name` now; nil when none
    /// does. On the bus thread.
    package func owner(of name: String) -> String? {
        var creds: OpaquePointer?
        guard sd_bus_get_name_creds(bus, name, kh_bus_creds_unique_name(), &creds) >= 0, let creds else { return nil }
        defer { sd_bus_creds_unref(creds) }
        var unique: UnsafePointer<CChar>?
        guard sd_bus_creds_get_unique_name(creds, &unique) >= 0, let unique else { return nil }
        return String(cString: unique)
    }

    /// The process that connected as unique name `name`, from the bus (its credentials for it).
    package func pid(of name: String) -> Int32? {
        var creds: OpaquePointer?
        guard sd_bus_get_name_creds(bus, name, kh_bus_creds_pid(), &creds) >= 0 else { return nil }
        return Self.pid(taking: creds)
    }

    /// Runs `work` on the bus thread, soon (from any thread).
    package func perform(_ work: @escaping @Sendable (BusConnection) -> Void) {
        queued.withLock { $0.append(work) }
        var one: UInt64 = 1
        _ = write(wake, &one, 8)
    }

    /// Ends ``run()`` (from any thread).
    package func stop() {
        stopped.store(true, ordering: .relaxed)
        perform { _ in }
    }

    /// Serves the bus until ``stop()`` or until the bus goes away; on this thread only.
    package func run() {
        while !stopped.load(ordering: .relaxed) {
            let r = sd_bus_process(bus, nil)
            if r < 0 { break }
            drain()
            if r > 0 { continue }
            var deadline: UInt64 = 0
            sd_bus_get_timeout(bus, &deadline)
            var timeout: Int32 = -1
            if deadline != UInt64.max {
                var now = timespec()
                clock_gettime(CLOCK_MONOTONIC, &now)
                let nowMicroseconds = UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
                timeout = deadline <= nowMicroseconds ? 0 : Int32(clamping: (deadline - nowMicroseconds + 999) / 1000)
            }
            var fds = [pollfd(fd: sd_bus_get_fd(bus), events: Int16(truncatingIfNeeded: sd_bus_get_events(bus)), revents: 0),
                       pollfd(fd: wake, events: Int16(POLLIN), revents: 0)]
            _ = poll(&fds, 2, timeout)
            if fds[1].revents != 0 {
                var count: UInt64 = 0
                _ = read(wake, &count, 8)
            }
        }
        drain()
        sd_bus_flush(bus)
        // Leaves the bus: the names it owned are free for another provider at once, and the
        // handlers (which hold their owner) are dropped.
        for slot in slots { sd_bus_slot_unref(slot) }
        slots = []
        signalHandlers = []
        onCall = nil
        onClientGone = nil
        onClientAppeared = nil
        sd_bus_close(bus)
    }

    private func drain() {
        while true {
            let work = queued.withLock { queue -> [@Sendable (BusConnection) -> Void] in
                defer { queue.removeAll() }
                return queue
            }
            if work.isEmpty { return }
            for item in work { item(self) }
        }
    }

    // MARK: - On the bus thread

    /// Sends a signal.
    package func emit(path: String, interface: String, member: String, _ values: [BusValue]) {
        var message: OpaquePointer?
        guard sd_bus_message_new_signal(bus, &message, path, interface, member) >= 0, let message else { return }
        defer { sd_bus_message_unref(message) }
        guard BusMessage.append(message, values) else { return }
        sd_bus_send(bus, message, nil)
    }

    /// The process id of a message's sender, as the bus knows it.
    func senderPID(_ message: OpaquePointer) -> Int32? {
        var creds: OpaquePointer?
        guard sd_bus_query_sender_creds(message, kh_bus_creds_pid(), &creds) >= 0 else { return nil }
        return Self.pid(taking: creds)
    }

    /// The process id in `creds`, which this releases.
    private static func pid(taking creds: OpaquePointer?) -> Int32? {
        guard let creds else { return nil }
        defer { sd_bus_creds_unref(creds) }
        var pid: pid_t = 0
        guard sd_bus_creds_get_pid(creds, &pid) >= 0, pid > 0 else { return nil }
        return pid
    }

    var handle: OpaquePointer { bus }
}
