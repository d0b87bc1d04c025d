/// How far a round is: entries pulled or pushed, items applied, out of how many.
package struct SyncProgress: Sendable, Hashable {
    package enum Phase: String, Sendable, Hashable {
        case pulling = "entries pulled"
        case applying = "items applied"
        case pushing = "entries pushed"
    }

    package let phase: Phase
    package let done: Int
    package let total: Int
}
