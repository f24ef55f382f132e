import Foundation
import Hummingbird
import HummingbirdTesting
import Logging
import Testing
import TipSync
import TipSyncServer
import TipSyncServerTestSupport
import TipSyncTestSupport

/// Right to erasure, down to the bytes (issue 31, item 5): after `DELETE /admin/v1/accounts/X` the
/// erased name and data were still in the SQLite `-wal` file while the server ran, and the name in
/// debug logs. Neither the database files nor any log line may hold them afterwards.
@Suite struct ErasureResidueTests {
    static let name = "dana-erasure-name-7f3c"
    static let payload = "dana-private-value-91be"

    static func fileBytes(_ directory: URL) throws -> [String: Data] {
        var files: [String: Data] = [:]
        for file in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
            files[file] = try Data(contentsOf: directory.appendingPathComponent(file))
        }
        return files
    }

    static func holders(of text: String, in files: [String: Data]) -> [String] {
        files.filter { $0.value.range(of: Data(text.utf8)) != nil }.keys.sorted()
    }

    @Test func anErasedAccountLeavesNoBytesInTheDatabaseFilesAndNoNameInTheLog() async throws {
        let directory = Scratch.path("tipsync-erase")
        let store = try SQLiteSyncStore(path: directory.appendingPathComponent("server.sqlite").path)
        try await store.migrate()
        _ = try await store.createAccount(name: Self.name)
        let token = try await CredentialIssuance(store).createToken(accountName: Self.name, device: "phone")
        _ = try await store.createAccount(name: "other")
        let otherToken = try await CredentialIssuance(store).createToken(accountName: "other", device: "phone")
        let key = try await CredentialIssuance(store).createAdminKey(name: "backend", at: 1).key
        let lines = LogCapture()
        var logger = Logger(label: "erasure-test") { _ in lines }
        logger.logLevel = .trace
        var configuration = ServerConfiguration()
        configuration.console = true
        let app = buildApplication(
            configuration: configuration.onAnyPort, dependencies: ServerDependencies(store: store, logger: logger))
        @Sendable func headers(_ credential: String) -> HTTPFields {
            var headers = HTTPFields()
            headers[.authorization] = "Bearer \(credential)"
            headers[.contentType] = "application/json"
            return headers
        }
        try await app.test(.router) { client in
            let changes = (1...20).map { seq in
                change("phone", Int64(seq), .parameter(id: "secret", value: .string("\(Self.payload)-\(seq)")))
            }
            try await client.execute(
                uri: "/v1/push", method: .post, headers: headers(token), body: try body(PushRequest(changes: changes))
            ) { #expect($0.status == .ok) }
            try await client.execute(uri: "/admin/v1/accounts/\(Self.name)", method: .get, headers: headers(key)) {
                #expect($0.status == .ok)
            }
            #expect(!Self.holders(of: Self.payload, in: try Self.fileBytes(directory)).isEmpty)

            try await client.execute(uri: "/admin/v1/accounts/\(Self.name)", method: .delete, headers: headers(key)) {
                #expect($0.status == .ok)
            }
            // The server keeps running and serving others.
            for seq in 1...100 {
                try await client.execute(
                    uri: "/v1/push", method: .post, headers: headers(otherToken),
                    body: try body(PushRequest(changes: [change("phone", Int64(seq), .datastoreReset)]))
                ) { #expect($0.status == .ok) }
            }
        }
        let files = try Self.fileBytes(directory)
        #expect(files.keys.contains("server.sqlite"))
        #expect(Self.holders(of: Self.payload, in: files).isEmpty, "erased data still in \(files.keys.sorted())")
        #expect(Self.holders(of: Self.name, in: files).isEmpty, "erased name still in the database files")
        #expect(!lines.text.contains(Self.name), "the erased name is in the log")
        #expect(lines.text.contains("account erased"))
    }
}
