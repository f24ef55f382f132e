import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TipSyncCore
import TipSyncServerTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// The operator's trap (issue 72): a server on the wrong database refuses every device's token, and
/// said so only as one `info` line per refusal, indistinguishable from a guesser's.
@Suite struct UnknownTokenWatchTests {
    /// Runs `body` against a server whose log lines the capture keeps; the capture, afterwards.
    static func withLoggedServer(
        _ body: @Sendable (ServerFixture, any TestClientProtocol) async throws -> Void
    ) async throws -> LogCapture {
        let capture = LogCapture()
        let fixture = try await ServerFixture.make()
        let dependencies = ServerDependencies(store: fixture.store, logger: Logger(label: "test") { _ in capture })
        let app = buildApplication(configuration: ServerConfiguration.test.onAnyPort, dependencies: dependencies)
        try await app.test(.router) { client in try await body(fixture, client) }
        return capture
    }

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
        let capture = try await Self.withLoggedServer { _, client in
            try await client.execute(
                uri: "/v1/pull", method: .get,
                headers: [.authorization: "Bearer ts_" + String(repeating: "A", count: 43)]
            ) { #expect($0.status == .unauthorized) }
        }
        #expect(capture.text.contains("presented device tokens this database never issued"))
    }

    /// A device token of an erased account is answered `401 account_erased` — the answer that ends
    /// its sync — not `unauthorized`, which it retries forever; and it does not count as a token
    /// this database never issued.
    @Test func anErasedAccountsDeviceTokenIsAnsweredAccountErased() async throws {
        let capture = try await Self.withLoggedServer { fixture, client in
            try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("phone")) {
                #expect($0.status == .ok)
            }
            let accountName = try #require(try await fixture.store.accountName(id: fixture.accountID))
            _ = try await fixture.store.eraseAccount(name: accountName, at: Int64(Date().timeIntervalSince1970 * 1000))
            for _ in 0..<2 {  // the token cache's path and the store's
                try await client.execute(uri: "/v1/pull", method: .get, headers: fixture.headers("phone")) { response in
                    #expect(response.status == .unauthorized)
                    #expect((try? decode(ErrorBody.self, response.body))?.error.code == "account_erased")
                }
            }
        }
        #expect(!capture.text.contains("never issued"))
    }
}
