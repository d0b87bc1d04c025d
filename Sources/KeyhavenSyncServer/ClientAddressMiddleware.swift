import Hummingbird

/// Behind a load balancer every request comes from the balancer's address, so the limits per
/// client would be one limit for everyone. For a peer named by `--trusted-proxy`, the client is
/// the address that peer appended to `X-Forwarded-For` (its rightmost entry that is not itself a
/// trusted proxy). From any other peer the header is ignored: a client cannot name itself.
package struct ClientAddressMiddleware: RouterMiddleware {
    package typealias Context = SyncRequestContext
    let trusted: Set<String>

    package init(trusted: Set<String>) {
        self.trusted = trusted
    }

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard trusted.contains(context.clientAddress) else { return try await next(request, context) }
        var context = context
        if let client = Self.client(forwardedFor: request.headers[values: .init("X-Forwarded-For")!], trusted: trusted) {
            context.clientAddress = client
        }
        return try await next(request, context)
    }

    /// The rightmost address of the `X-Forwarded-For` values that is not a trusted proxy.
    package static func client(forwardedFor values: [String], trusted: Set<String>) -> String? {
        let hops = values.flatMap { $0.split(separator: ",") }.map { String($0.filter { !$0.isWhitespace }) }.filter { !$0.isEmpty }
        return hops.last { !trusted.contains($0) }
    }
}
