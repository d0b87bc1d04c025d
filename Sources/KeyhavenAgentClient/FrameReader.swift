#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import KeychainModel

/// Reads the agent protocol's frames (a 4-byte big-endian length, then that many bytes) from a
/// blocking stream socket in as few `recv`s as their bytes allow: one for a frame that comes whole
/// and fits in ``firstRead`` bytes (the length and the body together), the usual case, since each
/// side writes a frame in one `send`.
///
/// A first read can take bytes of the next frame too (a client that sends its next request
/// before it reads the answer); they are kept, at most ``firstRead`` of them, and the next frame
/// starts from them. Bytes of a frame are wiped from every buffer given up, except those that
/// ``next(maximum:step:arrived:)`` outgrows with a `step` (see there).
package struct FrameReader {
    /// What the first read of a frame takes: a look-up's request and answer, and most others,
    /// whole.
    package static let firstRead = 1024

    package enum Failure: Error, Equatable {
        /// The connection ended (or broke) before the frame did.
        case closed
        /// The frame's length is over the maximum: nothing more of it was read than the first
        /// read took, and nothing allocated for it.
        case oversized
    }

    private let fd: Int32
    /// Bytes read past the last frame: the start of the next.
    private var pending: [UInt8] = []

    package init(fd: Int32) { self.fd = fd }

    /// Whether bytes of the next frame are already read.
    package var hasPending: Bool { !pending.isEmpty }

    /// Wipes and drops the bytes read past the last frame.
    package mutating func discardPending() {
        zeroize(&pending)
        pending = []
    }

    /// The next frame's body. `arrived` runs when its first bytes are in (at once when they were
    /// read with the last frame). A body longer than ``firstRead`` is read into memory taken as its
    /// bytes come, at most `step` bytes ahead of them, so a peer that announces a large frame and
    /// sends nothing holds only `step` bytes; with a `step`, the buffers outgrown are freed unwiped,
    /// so it is for a process whose freed memory is overwritten (the agent's). Without one, the
    /// buffer grows once, to the frame's size, and the outgrown one is wiped.
    package mutating func next(maximum: Int, step: Int = .max, arrived: () -> Void = {}) throws(Failure) -> [UInt8] {
        var buffer = Self.room(Self.firstRead)
        var received = pending.count
        if received > 0 {
            buffer.withUnsafeMutableBytes { target in pending.withUnsafeBytes { target.copyMemory(from: $0) } }
            discardPending()
            arrived()
        }
        do throws(Failure) {
            try receive(into: &buffer, received: &received, atLeast: 4, arrived: arrived)
            let length = buffer.prefix(4).reduce(0) { $0 << 8 | Int($1) }
            guard length <= maximum else { throw Failure.oversized }
            let total = 4 + length
            while received < total {
                if received == buffer.count { grow(&buffer, toward: total, step: step) }
                try receive(into: &buffer, received: &received, atLeast: received + 1, arrived: arrived)
            }
            if received > total { pending = Array(buffer[total..<received]) }
            // The body moves to the front; the bytes received behind it are wiped before the
            // array is shortened (its capacity stays, so nothing is copied or freed unwiped).
            let received = received
            buffer.withUnsafeMutableBytes { raw in
                guard let base = raw.baseAddress else { return }
                memmove(base, base + 4, length)
                explicit_bzero(base + length, received - length)
            }
            buffer.removeLast(buffer.count - length)
            return buffer
        } catch {
            zeroize(&buffer)
            throw error
        }
    }

    /// Makes room for more of a frame of `total` bytes: `step` more (the outgrown buffer freed as
    /// it is), or without a step all of it at once (the outgrown buffer wiped).
    private func grow(_ buffer: inout [UInt8], toward total: Int, step: Int) {
        if step == .max {
            var whole = Self.room(total)
            whole.withUnsafeMutableBytes { target in buffer.withUnsafeBytes { target.copyMemory(from: $0) } }
            zeroize(&buffer)
            buffer = whole
        } else {
            buffer.append(contentsOf: repeatElement(0, count: min(step, total - buffer.count)))
        }
    }

    /// Room for `count` bytes, not cleared: only the bytes `recv` writes are ever read, and those
    /// are wiped (clearing the whole first read's buffer on every frame, and wiping all of it
    /// again, cost more than the frame's own bytes).
    private static func room(_ count: Int) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: count) { _, initialized in initialized = count }
    }

    /// Reads into `buffer` after its first `received` bytes, up to its end, until at least
    /// `atLeast` bytes are in.
    private func receive(into buffer: inout [UInt8], received: inout Int, atLeast: Int, arrived: () -> Void) throws(Failure) {
        while received < atLeast {
            let start = received
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress! + start, $0.count - start, 0) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { throw Failure.closed }
            if start == 0 { arrived() }
            received += n
        }
    }
}
