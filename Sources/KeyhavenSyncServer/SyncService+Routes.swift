import Hummingbird
import KeyhavenSyncCore

/// The API's routes by concern, each a route collection mounted under its path by
/// ``SyncService/router(limiter:trustedProxies:measured:)``.
extension SyncService {
    /// `/v1/accounts`: a new account from its first entry (201 and the head); a push of a
    /// ``LogBatch`` (200 and the new head, 409 when the log moved on); a signed pull that waits up
    /// to `wait` seconds for entries after `after`.
    func accountRoutes() -> RouteCollection<SyncRequestContext> {
        let routes = RouteCollection(context: SyncRequestContext.self)
        routes.post { request, context in
            await answer { () throws(SyncServerError) in
                let genesis = try LogEntry.decodeRequest(try await body(request, context, limit: accountBodyLimit))
                return Self.ok(try await store.createAccount(genesis).wireBytes, status: .created)
            }
        }
        routes.post(":account/entries") { request, context in
            await answer { () throws(SyncServerError) in
                let account = try Self.account(context)
                let batch = try LogBatch.decodeRequest(try await body(request, context, limit: pushBodyLimit))
                guard batch.entries.allSatisfy({ $0.account == account }) else {
                    throw SyncServerError(.badRequest, "the entries are for another account")
                }
                return Self.ok(try await store.push(batch.entries).wireBytes)
            }
        }
        routes.get(":account/entries") { request, context in
            await answer { () throws(SyncServerError) in
                let account = try Self.account(context)
                let after = try Self.number(request, "after"), wait = try Self.wait(request)
                try await authenticate(request, account: account, body: [])
                return try await poll(account, after: UInt64(after), until: ContinuousClock.now + .seconds(wait))
            }
        }
        return routes
    }

    /// `/v1/devices`: the account a device is on, signed by that device (how a recovery key finds
    /// its account).
    func deviceRoutes() -> RouteCollection<SyncRequestContext> {
        let routes = RouteCollection(context: SyncRequestContext.self)
        routes.get(":device/account") { request, context in
            await answer { () throws(SyncServerError) in
                guard let device = context.parameters.get("device").flatMap(DeviceID.init(hex:)) else {
                    throw SyncServerError(.badRequest, "a device id is 32 hexadecimal digits")
                }
                let (account, keys) = try await store.account(of: device)
                try Self.checkSignature(request, device: device, keys: keys, body: [])
                return Self.ok(account.wireBytes)
            }
        }
        return routes
    }

    /// `/v1/pairing`: the relay of a pairing's messages, posted by one side and read, waiting, by
    /// the other.
    func pairingRoutes() -> RouteCollection<SyncRequestContext> {
        let routes = RouteCollection(context: SyncRequestContext.self)
        routes.post(":slot/:side") { request, context in
            await answer { () throws(SyncServerError) in
                let (slot, side) = try Self.pairing(context)
                let number = try await store.postPairing(slot: slot, role: side, message: try await body(request, context, limit: Self.pairingBodyLimit))
                return Self.ok(Array(String(number).utf8), status: .created)
            }
        }
        routes.get(":slot/:side") { request, context in
            await answer { () throws(SyncServerError) in
                let (slot, side) = try Self.pairing(context)
                let after = try Self.number(request, "after")
                let deadline = ContinuousClock.now + .seconds(try Self.wait(request))
                let messages = try await longPoll(.pairing(slot: slot, side: side), until: deadline) { (_) throws(SyncServerError) in
                    let messages = try await store.pairingMessages(slot: slot, role: side, after: after)
                    return (messages, !messages.isEmpty)
                }
                return Self.ok(RelayMessages(messages).wireBytes)
            }
        }
        return routes
    }
}
