import AsyncHTTPClient
import Crypto
import Foundation
import NIOCore
import NIOHTTP1
import NIOSSL
import SwiftASN1
import Testing
import TipSync
import TipSyncCore
import TipSyncServerTestSupport
import TipSyncTestSupport
import X509

/// TLS without Docker (issue 53, item 8): `tipsync-server serve --tls-certificate --tls-key` serves
/// HTTPS itself, tried with a real TLS client (async-http-client over swift-nio-ssl) against a
/// throwaway certificate: `/health`, two devices syncing through the Swift sync client, and a live
/// stream (served on the connection's pipeline, behind TLS like every other request).
@Suite struct TLSServerTests {
    /// A self-signed certificate for `localhost` valid for an hour, written as PEM files.
    struct ThrowawayCertificate {
        let certificatePath: String
        let keyPath: String
        let pem: String

        init(in directory: URL) throws {
            let key = P256.Signing.PrivateKey()
            let name = try DistinguishedName { CommonName("localhost") }
            let now = Date()
            let certificate = try Certificate(
                version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
                notValidBefore: now - 3600, notValidAfter: now + 3600, issuer: name, subject: name,
                signatureAlgorithm: .ecdsaWithSHA256,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    SubjectAlternativeNames([.dnsName("localhost")])
                },
                issuerPrivateKey: .init(key))
            pem = try certificate.serializeAsPEM().pemString
            certificatePath = directory.appendingPathComponent("fullchain.pem").path
            keyPath = directory.appendingPathComponent("privkey.pem").path
            try Data(pem.utf8).write(to: URL(fileURLWithPath: certificatePath))
            try Data(key.pemRepresentation.utf8).write(to: URL(fileURLWithPath: keyPath))
        }

        /// An HTTP client that trusts this certificate only.
        func client() throws -> HTTPClient {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .certificates([try NIOSSLCertificate(bytes: Array(pem.utf8), format: .pem)])
            var configuration = HTTPClient.Configuration(tlsConfiguration: tls)
            configuration.timeout.connect = .seconds(10)
            return HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
        }
    }

    @Test(.timeLimit(.minutes(2))) func devicesSyncOverHTTPSServedByTheServerItself() async throws {
        let directory = Scratch.directory("tipsync-tls")
        let certificate = try ThrowawayCertificate(in: directory)
        let database = "sqlite:" + directory.appendingPathComponent("server.sqlite").path
        #expect(try await ServerProcess.run(["accounts", "create", "alice", "--database", database]).status == 0)
        func token(_ device: String) async throws -> String {
            try await ServerProcess.run([
                "tokens", "create", "--account", "alice", "--device", device, "--database", database,
            ]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }
        let server = try await ServerUnderTest.start(
            database: database,
            arguments: ["--tls-certificate", certificate.certificatePath, "--tls-key", certificate.keyPath])
        defer { server.process.terminate() }
        // Issue 73, item 7: the start log says TLS is on, where, and the certificate's subject and expiry.
        let log = server.process.stderr.text
        #expect(log.contains("TLS on: https://127.0.0.1:\(server.port)"), "\(log)")
        #expect(log.contains("certificate=CN=localhost, DNS:localhost"), "\(log)")
        #expect(log.contains("the TLS certificate expires soon"), "valid for an hour: \(log)")
        let base = "https://localhost:\(server.port)"
        let client = try certificate.client()

        let health = try await client.execute(HTTPClientRequest(url: base + "/health"), timeout: .seconds(10))
        #expect(health.status == .ok)
        let body = try await health.body.collect(upTo: 4096)
        #expect(String(buffer: body).hasPrefix(#"{"status":"ok""#))

        // Plain HTTP on the TLS port gets no HTTP answer.
        await #expect(throws: (any Error).self) {
            _ = try await RawConnection.exchange(port: server.port, method: "GET", path: "/health", within: 5)
        }

        // A live laptop and a phone that syncs once, both over HTTPS.
        let phone = try makeDevice("phone")
        let laptop = try makeDevice("laptop")
        func sync(_ replica: TipsReplica, _ device: String) async throws -> SyncClient {
            SyncClient(
                replica: replica,
                configuration: SyncConfiguration(server: URL(string: base)!, token: try await token(device)),
                transport: HTTPClientTransport(baseURL: URL(string: base)!, client: client))
        }
        let laptopClient = try await sync(laptop, "laptop")
        let live = Task { try await laptopClient.run() }
        #expect(await laptopClient.waitForFirstSync(timeout: .seconds(30)))
        try phone.invalidate(tip: "welcome", reason: .tipClosed)
        try await sync(phone, "phone").syncOnce()
        for await status in laptop.statusUpdates(of: { TipDefinition(id: "welcome", title: "Welcome") }) {
            if status == .invalidated(.tipClosed) { break }
        }
        #expect(await laptopClient.status.isConnected)
        live.cancel()
        _ = await live.result
        try await client.shutdown()
    }

    @Test func aTLSFileThatCannotBeReadIsOneLineNamingIt() async throws {
        let directory = Scratch.directory("tipsync-tls")
        let certificate = try ThrowawayCertificate(in: directory)
        let database = "sqlite:" + directory.appendingPathComponent("server.sqlite").path
        let missing = directory.appendingPathComponent("missing.pem").path
        let result = try await ServerProcess.run([
            "serve", "--database", database, "--http-port", String(FreePort.next()), "--tls-certificate", missing,
            "--tls-key", certificate.keyPath,
        ])
        #expect(result.status != 0)
        let last = result.stderr.split(separator: "\n").last.map(String.init) ?? ""
        #expect(
            last.contains(
                "--tls-certificate / TIPSYNC_TLS_CERTIFICATE: cannot read a PEM certificate chain from \(missing)"),
            "\(result.stderr)")
        let half = try await ServerProcess.run([
            "serve", "--database", database, "--tls-certificate", certificate.certificatePath,
        ])
        #expect(half.status != 0)
        #expect(
            half.stderr.contains("--tls-key / TIPSYNC_TLS_KEY: --tls-certificate needs --tls-key too"), "\(half.stderr)"
        )
    }
}
