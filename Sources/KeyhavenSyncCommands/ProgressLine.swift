import KeyhavenCLI
import KeyhavenSyncDevice
import Synchronization

/// The progress of a long exchange, on one terminal line rewritten in place; only past 200
/// entries or items (a short exchange shows nothing), and cleared before the command's own output.
enum ProgressLine {
    static let shown = Mutex(false)

    @Sendable static func show(_ progress: SyncProgress) {
        guard progress.total >= 200 else { return }
        shown.withLock { shown in
            shown = true
            writeStandardOutput(Array("\r\u{1B}[K\(progress.done) of \(progress.total) \(progress.phase.rawValue), \(progress.total - progress.done) left".utf8))
        }
    }

    static func clear() {
        shown.withLock { shown in
            if shown { writeStandardOutput(Array("\r\u{1B}[K".utf8)) }
            shown = false
        }
    }
}
