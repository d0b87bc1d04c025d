import AsyncHTTPClient
import Foundation
import KeychainTestSupport

/// A server's Prometheus endpoint as the tests read it: each sample by its name and labels as
/// printed (`keyhaven_sync_pushes_total`, `keyhaven_sync_http_requests_total{route="/v1/health",...}`).
struct MetricsScrape {
    let samples: [String: Double]

    subscript(_ key: String) -> Double { samples[key] ?? 0 }

    /// The sum of the samples of `name` whose labels contain each of `labels` (`route="/v1/health"`).
    func sum(_ name: String, _ labels: String...) -> Double {
        samples.filter { key, _ in
            (key == name || key.hasPrefix(name + "{")) && labels.allSatisfy { key.contains($0) }
        }.values.reduce(0, +)
    }

    static func scrape(_ server: TestSyncServer) async throws -> MetricsScrape {
        var port = server.metricsPort
        for _ in 0..<100 where port == nil {
            try await Task.sleep(for: .milliseconds(50))
            port = server.metricsPort
        }
        guard let port else { throw TestSyncServerError.metricsOff }
        let response = try await HTTPClient.shared.execute(HTTPClientRequest(url: "http://127.0.0.1:\(port)/metrics"), timeout: .seconds(30))
        let text = String(buffer: try await response.body.collect(upTo: 8 << 20))
        var samples: [String: Double] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            samples[String(line[..<space])] = value
        }
        return MetricsScrape(samples: samples)
    }

    /// Scrapes until `condition` holds (at most `limit`); the last scrape.
    static func await(_ server: TestSyncServer, limit: Duration = .seconds(20), _ condition: (MetricsScrape) -> Bool) async throws -> MetricsScrape {
        let start = ContinuousClock.now
        var last = try await scrape(server)
        while !condition(last), ContinuousClock.now - start < limit {
            try await Task.sleep(for: .milliseconds(50))
            last = try await scrape(server)
        }
        return last
    }
}

extension TestSyncServerError {
    static var metricsOff: TestSyncServerError { TestSyncServerError("the server did not print its metrics address") }
}
