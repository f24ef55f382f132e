import Foundation
import Hummingbird
import HummingbirdTesting
import Prometheus
import Testing
import TipSync
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// `/metrics` explains itself: every TipSync metric family has a `# HELP` line (issue 31, item 9).
@Suite struct MetricsHelpTests {
    @Test func everyTipSyncMetricHasHelp() async throws {
        let fixture = try await ServerFixture.make()
        let app = buildApplication(
            configuration: .test,
            dependencies: ServerDependencies(store: fixture.store, registry: PrometheusCollectorRegistry()))
        try await app.test(.live) { client in
            try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("phone")) {
                #expect($0.status == .ok)
            }
            try await client.execute(uri: "/metrics", method: .get) { response in
                let lines = String(buffer: response.body).split(separator: "\n")
                let typed = Set(
                    lines.filter { $0.hasPrefix("# TYPE tipsync_") }.map { String($0.split(separator: " ")[2]) })
                let helped = Set(
                    lines.filter { $0.hasPrefix("# HELP tipsync_") }.map { String($0.split(separator: " ")[2]) })
                #expect(typed.count >= 10, "\(typed)")
                #expect(typed.subtracting(helped).isEmpty, "no # HELP for \(typed.subtracting(helped).sorted())")
            }
        }
    }
}
