/// The last few answer times of one kind of request, and how long a client may sleep before it
/// polls for the next answer of that kind (``AnswerWait``).
///
/// For answers that take longer than a client polls for (writes wait for the disk, about 600 us
/// on this project's machine), the client sleeps in `recv` and the answer has to wake it: tens of
/// microseconds on a virtual machine whose idle CPUs halt. When the recent answers are regular,
/// the client can instead sleep until shortly before the usual time and poll from there. The nap
/// ends at the third fastest of the last ``kept`` answers (an answer faster than that wakes the
/// client as before), and the client then polls for a window of a given length. Regular means
/// that at least half of those answers came within that window; answers that vary more (a busy
/// agent, fifty clients queueing) give no nap, so a loaded machine spends nothing on polling for
/// them.
package struct AnswerTimes: Sendable {
    /// How many answer times are kept.
    package static let kept = 16
    /// Fewer recorded times than this give no nap.
    package static let needed = 8
    /// The nap ends at the recent answer of this rank, fastest first (0): the third fastest.
    package static let napRank = 2

    private var times: [UInt64] = []
    private var next = 0

    package init() {}

    /// Records that an answer came `nanoseconds` after its request was sent.
    package mutating func record(_ nanoseconds: UInt64) {
        if times.count < Self.kept {
            times.append(nanoseconds)
        } else {
            times[next] = nanoseconds
        }
        next = (next + 1) % Self.kept
    }

    /// How long to sleep after sending before polling for `window` nanoseconds: the third fastest
    /// of the recent answers, when at least half of them came within `window` of it; 0 (no nap)
    /// otherwise, with too few answers recorded, or with a window of 0.
    package func nap(window: UInt64) -> UInt64 {
        guard window > 0, times.count >= Self.needed else { return 0 }
        let sorted = times.sorted()
        let start = sorted[Self.napRank]
        let inWindow = sorted.reduce(0) { $0 + ((start...start + window).contains($1) ? 1 : 0) }
        return inWindow * 2 >= sorted.count ? start : 0
    }
}
