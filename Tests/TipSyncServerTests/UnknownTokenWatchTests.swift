import HummingbirdTesting
import Logging
import Testing

@testable import TipSyncServer

/// The operator's trap (issue 72): a server on the wrong database refuses every device's token, and
/// said so only as one `info` line per refusal, indistinguishable from a guesser's.
@Suite struct UnknownTokenWatchTests {
    @Test func unknownTokensAreOneWarningAMinuteWithTheirCount() {
        let capture = LogCapture()
        let watch = UnknownTokenWatch(logger: Logger(label: "test") { _ in capture })
        watch.note(now: 1_000)
        for second in 2...10 { watch.note(now: Int64(second) * 1000) }
        #expect(capture.text.components(separatedBy: "\n").count == 1)
        #expect(capture.text.hasPrefix("warning 1 request(s)"))
        #expect(capture.text.contains("is this server on the right database?"))
        watch.note(now: 61_000)
        let lines = capture.text.components(separatedBy: "\n")
        #expect(lines.count == 2)
        #expect(lines.last?.hasPrefix("warning 10 request(s)") == true)
    }

    @Test func aRunningServerWarnsOfTokensItNeverIssued() async throws {
        let capture = LogCapture()
        let fixture = try await ServerFixture.make()
        let dependencies = ServerDependencies(store: fixture.store, logger: Logger(label: "test") { _ in capture })
        let app = buildApplication(configuration: ServerConfiguration.test.onAnyPort, dependencies: dependencies)
        try await app.test(.router) { client in
            try await client.execute(
                uri: "/v1/pull", method: .get,
                headers: [.authorization: "Bearer ts_" + String(repeating: "A", count: 43)]
            ) { #expect($0.status == .unauthorized) }
        }
        #expect(capture.text.contains("presented device tokens this database never issued"))
    }
}
