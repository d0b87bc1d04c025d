import CoreMetrics
import Prometheus

/// The server's own measurements, through swift-metrics: whatever backend the process bootstraps
/// (``prometheus()`` for `--metrics`), nothing when none is. Hummingbird's `MetricsMiddleware`
/// adds each request by route and status, and its duration; ``prometheus()`` gives those their
/// names below. docs/sync.md lists every metric.
package struct SyncMetrics: Sendable {
    /// Polls registered and waiting (pulls and pairing reads).
    let openPolls: CoreMetrics.Meter
    /// Pushes stored, and the entries in them.
    let pushes: CoreMetrics.Counter
    let pushedEntries: CoreMetrics.Counter
    /// Entries sent to devices in answer to pulls, and their bytes: how often a change crosses
    /// the wire to the devices that take it.
    let pulledEntries: CoreMetrics.Counter
    let pulledBytes: CoreMetrics.Counter
    /// Pushes refused because the log moved on (the device pulls and pushes again).
    let conflicts: CoreMetrics.Counter
    /// Notifications this server sent (one a push or pairing message) and received.
    let notificationsSent: CoreMetrics.Counter
    let notificationsReceived: CoreMetrics.Counter
    /// Polls answered from what the server kept, without a query.
    let answeredWithoutQuery: CoreMetrics.Counter
    /// 1 while the listening connection listens.
    let listenerUp: CoreMetrics.Meter
    let listenerReconnects: CoreMetrics.Counter
    /// Database calls running now (each holds a pooled connection), the pool's size, and the calls
    /// that failed for the database's sake (each a 503).
    let databaseInUse: CoreMetrics.Meter
    let databasePoolSize: CoreMetrics.Meter
    let databaseErrors: CoreMetrics.Counter

    package init(factory: any MetricsFactory = MetricsSystem.factory) {
        func counter(_ label: String) -> CoreMetrics.Counter { CoreMetrics.Counter(label: label, dimensions: [], factory: factory) }
        func meter(_ label: String) -> CoreMetrics.Meter { CoreMetrics.Meter(label: label, dimensions: [], factory: factory) }
        openPolls = meter("keyhaven_sync_open_polls")
        pushes = counter("keyhaven_sync_pushes_total")
        pushedEntries = counter("keyhaven_sync_pushed_entries_total")
        pulledEntries = counter("keyhaven_sync_pulled_entries_total")
        pulledBytes = counter("keyhaven_sync_pulled_entry_bytes_total")
        conflicts = counter("keyhaven_sync_conflicts_total")
        notificationsSent = counter("keyhaven_sync_notifications_sent_total")
        notificationsReceived = counter("keyhaven_sync_notifications_received_total")
        answeredWithoutQuery = counter("keyhaven_sync_polls_without_query_total")
        listenerUp = meter("keyhaven_sync_listener_up")
        listenerReconnects = counter("keyhaven_sync_listener_reconnects_total")
        databaseInUse = meter("keyhaven_sync_database_connections_in_use")
        databasePoolSize = meter("keyhaven_sync_database_connections_max")
        databaseErrors = counter("keyhaven_sync_database_errors_total")
    }

    /// A Prometheus factory on `registry`, with Hummingbird's request metrics under the server's
    /// names and buckets that reach a long poll's 30 seconds.
    package static func prometheus(_ registry: PrometheusCollectorRegistry) -> PrometheusMetricsFactory {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [.milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25),
                                                   .milliseconds(50), .milliseconds(100), .milliseconds(250), .milliseconds(500),
                                                   .seconds(1), .milliseconds(2500), .seconds(5), .seconds(10), .seconds(31)]
        factory.nameAndLabelSanitizer = { name, labels in
            let names = ["hb.requests": "keyhaven_sync_http_requests_total",
                         "http.server.request.duration": "keyhaven_sync_http_request_duration_seconds",
                         "hb.request.errors": "keyhaven_sync_http_request_errors_total",
                         "http.server.active_requests": "keyhaven_sync_http_active_requests"]
            let labelNames = ["http.route": "route", "http.request.method": "method", "http.response.status_code": "status",
                              "error.type": "status"]
            return (names[name] ?? name.replacingDots(), labels.map { (labelNames[$0.0] ?? $0.0.replacingDots(), $0.1) })
        }
        return factory
    }
}

extension String {
    fileprivate func replacingDots() -> String { String(map { $0 == "." ? "_" : $0 }) }
}
