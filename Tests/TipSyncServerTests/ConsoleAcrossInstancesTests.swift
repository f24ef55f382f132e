import Foundation
import HTTPTypes
import Hummingbird
import HummingbirdTesting
import Testing
import TipSyncCore
import TipSyncServerTestSupport
import TipSyncStorage
import TipSyncTestSupport

@testable import TipSyncDeviceService
@testable import TipSyncOperatorService
@testable import TipSyncServer

/// Issue 73, item 9: console sessions lived in one instance's memory, so a restart logged every
/// operator out and a plain round-robin balancer broke the console (deploy/README pinned `/console`
/// to one instance). They are kept in the database: two instances on one database — each with its
/// own connection to it, as two processes have — take each other's sessions, and a logout on one
/// ends the session on both.
@Suite struct ConsoleAcrossInstancesTests {
    @Test func aSessionOpenedOnOneInstanceWorksOnAnotherAndEndsOnBoth() async throws {
        let path = Scratch.directory("tipsync-console").appendingPathComponent("server.sqlite").path
        let store = try SQLiteSyncStore(path: path)
        try await store.migrate()
        _ = try await store.createAccount(name: "alice")
        let key = try await CredentialIssuance(store).createAdminKey(name: "ops", at: 1).key
        let other = try SQLiteSyncStore(path: path)
        var settings = ServerConfiguration.test
        settings.console = true
        let configuration = settings
        @Sendable func instance(_ store: SQLiteSyncStore) -> some ApplicationProtocol {
            buildApplication(configuration: configuration.onAnyPort, dependencies: ServerDependencies(store: store))
        }
        let first = instance(store)
        let second = instance(other)
        try await first.test(.router) { a in
            try await second.test(.router) { b in
                // Log in on the first instance; the balancer sends the next requests to the second.
                let (cookie, csrf) = try await ConsoleTests.login(a, key: key)
                let page = try await ConsoleTests.get(b, "/console/accounts/alice", cookie: cookie)
                #expect(page.contains("alice"))
                // A form posted to the second with the session's CSRF token from the first is taken.
                let reset = try await ConsoleTests.post(
                    b, "/console/accounts/alice/tips/welcome/reset", cookie: cookie, form: "csrf=\(csrf)")
                #expect(reset.status == .seeOther && reset.location?.hasPrefix("/console/accounts/alice") == true)
                // Logging out on the second ends the session on the first too.
                #expect(
                    try await ConsoleTests.post(b, "/console/logout", cookie: cookie, form: "csrf=\(csrf)").status
                        == .seeOther)
                try await a.execute(uri: "/console", method: .get, headers: [.cookie: cookie]) { response in
                    #expect(response.status == .seeOther)
                    #expect(response.headers[.location] == "/console/login")
                }
            }
        }
        // A restarted instance (a new application on the same database) keeps a live session.
        let restarted = instance(try SQLiteSyncStore(path: path))
        try await first.test(.router) { a in
            let (cookie, _) = try await ConsoleTests.login(a, key: key)
            try await restarted.test(.router) { b in
                let page = try await ConsoleTests.get(b, "/console", cookie: cookie)
                #expect(page.contains("Log out"))
            }
        }
    }
}
