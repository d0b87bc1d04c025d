import KeychainModel

/// The agent's answer to one request: its result, or the error it failed with.
package enum AgentResponse: Sendable {
    case answer(AgentAnswer)
    case failure(StoreError)

    /// The result, or the failure thrown as it is.
    package func get() throws(StoreError) -> AgentAnswer {
        switch self {
        case .answer(let answer): return answer
        case .failure(let error): throw error
        }
    }

    /// The failure, if the request failed.
    package var error: StoreError? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
