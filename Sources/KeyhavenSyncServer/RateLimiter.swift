import FoundationEssentials
import Hummingbird
import NIOCore

/// Requests per second per client address, as token buckets: `burst` requests at once, then
/// `perSecond`. Kept in memory: a limit is a guard for this process, not state to share (two
/// servers each apply their own). Buckets full again are dropped, so the table stays small.
package actor RateLimiter {
    private struct Bucket {
        var tokens: Double
        var updated: ContinuousClock.Instant
    }

    private let perSecond: Double
    private let burst: Double
    private var buckets: [String: Bucket] = [:]
    private var lastSweep = ContinuousClock.now

    package init(perSecond: Double, burst: Int) {
        (self.perSecond, self.burst) = (perSecond, Double(burst))
    }

    /// Takes a token for `client`; false when it has none left.
    package func admit(_ client: String) -> Bool {
        let now = ContinuousClock.now
        sweep(now)
        var bucket = buckets[client] ?? Bucket(tokens: burst, updated: now)
        bucket.tokens = min(burst, bucket.tokens + perSecond * Self.seconds(now - bucket.updated))
        bucket.updated = now
        guard bucket.tokens >= 1 else {
            buckets[client] = bucket
            return false
        }
        bucket.tokens -= 1
        buckets[client] = bucket
        return true
    }

    private func sweep(_ now: ContinuousClock.Instant) {
        guard now - lastSweep > .seconds(10) else { return }
        lastSweep = now
        buckets = buckets.filter { burst - ($0.value.tokens + perSecond * Self.seconds(now - $0.value.updated)) > 0 }
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}

/// Answers 429 Too Many Requests, with Retry-After, to a client over its rate.
package struct RateLimitMiddleware: RouterMiddleware {
    package typealias Context = SyncRequestContext
    let limiter: RateLimiter

    package func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard await limiter.admit(context.limitKey) else {
            return SyncService.refusal(SyncServerError(.tooManyRequests, "too many requests: slow down"), retryAfter: 1)
        }
        return try await next(request, context)
    }
}
