import Foundation
package import Hummingbird
import HummingbirdTesting
package import TipSync
package import TipSyncServer
import TipSyncTestSupport

/// A server store in a temporary directory with one account and device tokens.
package struct ServerFixture {
    package let store: SQLiteSyncStore
    package let accountID: Int64
    package var tokens: [String: String] = [:]

    package init(store: SQLiteSyncStore, accountID: Int64, tokens: [String: String] = [:]) {
        self.store = store
        self.accountID = accountID
        self.tokens = tokens
    }

    package static func make(devices: [String] = ["phone", "laptop"], account: String = "alice") async throws
        -> ServerFixture
    {
        let directory = Scratch.path("tipsync-server")
        let store = try SQLiteSyncStore(path: directory.appendingPathComponent("server.sqlite").path)
        try await store.migrate()
        var fixture = ServerFixture(store: store, accountID: try await store.createAccount(name: account))
        for device in devices {
            fixture.tokens[device] = try await CredentialIssuance(store).createToken(
                accountName: account, device: device)
        }
        return fixture
    }

    package func app(
        configuration: ServerConfiguration = .test,
        now: @escaping @Sendable () -> Int64 = { Int64(Date().timeIntervalSince1970 * 1000) }
    )
        -> some ApplicationProtocol
    {
        buildApplication(
            configuration: configuration.onAnyPort, dependencies: ServerDependencies(store: store, now: now))
    }

    package func headers(_ device: String) -> HTTPFields {
        var headers = HTTPFields()
        headers[.authorization] = "Bearer \(tokens[device] ?? "none")"
        headers[.contentType] = "application/json"
        return headers
    }
}

package func body(_ value: some Encodable) throws -> ByteBuffer {
    ByteBuffer(bytes: try JSONCoding.encoder.encode(value))
}

package func decode<T: Decodable>(_ type: T.Type, _ buffer: ByteBuffer) throws -> T {
    try JSONCoding.decoder.decode(T.self, from: Data(buffer.readableBytesView))
}

package func change(
    _ device: String, _ seq: Int64, _ operation: Change.Operation,
    ms: UInt64 = UInt64(Date().timeIntervalSince1970 * 1000)
)
    -> Change
{
    Change(device: device, seq: seq, hlc: HLC(milliseconds: ms, counter: 0), operation: operation)
}

/// A replica in a temporary directory.
package func makeDevice(_ name: String, clock: TipsClock = .system) throws -> TipsReplica {
    let directory = Scratch.path("tipsync-device")
    return try TipsReplica(directory: directory, deviceID: name, clock: clock, environment: [:])
}

extension ServerConfiguration {
    /// The defaults, listening on any free port (tests read it in `onServerRunning`), with a keep-alive
    /// idle time of 10 minutes instead of 10 s: in-process tests share CI's two cores with the whole
    /// suite, and a test starved for more than 10 s between two requests found its connection closed
    /// by the server ("I/O on closed channel": HummingbirdTesting's client does not reconnect). Tests
    /// of the idle time set their own.
    package static var test: ServerConfiguration {
        var configuration = ServerConfiguration().onAnyPort
        configuration.requestHeadTimeout = .seconds(600)
        return configuration
    }

    /// This configuration, listening on any free port.
    package var onAnyPort: ServerConfiguration {
        var configuration = self
        configuration.httpPort = 0
        return configuration
    }
}
