public import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
public import TipSync
import TipSyncServer

/// The real server logic — `buildRouter`'s routes, middleware and the SQLite store — called in
/// process with no sockets, on the simulation's clock. A restart reopens the same database file; a
/// restore serves a copy of the latest backup instead.
public actor SimulatedServer {
    /// The server's defaults without rate limits: the simulator replays histories at any pace.
    static let configuration: ServerConfiguration = {
        var configuration = ServerConfiguration()
        configuration.requestRate = .unlimited
        configuration.changeRate = .unlimited
        return configuration
    }()

    let directory: URL
    /// The database being served (a restore switches to a copy of the backup).
    var path: String
    var backupPath: String { directory.appendingPathComponent("backup.sqlite").path }
    var restores = 0
    let now: @Sendable () -> Int64
    var store: SQLiteSyncStore
    var responder: RouterResponder<SyncRequestContext>
    let channel = EmbeddedChannel()
    let logger = Logger(label: "tipsync-sim") { _ in SwiftLogNoOpLogHandler() }
    /// Each device's token.
    public private(set) var tokens: [String: String] = [:]

    /// A server with one account, `sim`, and a token for each of `devices`, in `directory`, on the
    /// clock `now` (milliseconds since 1970).
    public init(directory: URL, devices: [String], now: @escaping @Sendable () -> Int64) async throws {
        self.directory = directory
        path = directory.appendingPathComponent("server.sqlite").path
        self.now = now
        store = try SQLiteSyncStore(path: path)
        try await store.migrate()
        _ = try await store.createAccount(name: "sim")
        for device in devices {
            tokens[device] = try await CredentialIssuance(store).createToken(accountName: "sim", device: device)
        }
        responder = buildRouter(
            configuration: Self.configuration, dependencies: ServerDependencies(store: store, now: now)
        ).buildResponder()
        try store.backup(to: backupPath)
    }

    /// The operator's backup (online, while serving).
    func backup() throws {
        try store.backup(to: backupPath)
    }

    /// The database is lost; the latest backup is copied into place and served after the restore
    /// steps of `deploy/README.md`: migrate, rotate the cursor generation, start.
    func restoreLatestBackup() async throws {
        restores += 1
        let restored = directory.appendingPathComponent("server-restored-\(restores).sqlite").path
        try FileManager.default.copyItem(atPath: backupPath, toPath: restored)
        path = restored
        store = try SQLiteSyncStore(path: path)
        try await store.migrate()
        _ = try await store.rotateCursorGeneration()
        responder = buildRouter(
            configuration: Self.configuration, dependencies: ServerDependencies(store: store, now: now)
        ).buildResponder()
    }

    /// The server process dies and starts again: a new store on the same file, new routes.
    public func restart() throws {
        store = try SQLiteSyncStore(path: path)
        responder = buildRouter(
            configuration: Self.configuration, dependencies: ServerDependencies(store: store, now: now)
        ).buildResponder()
    }

    /// Compacts the account's log, as `tipsync-server compact` does.
    func compact() async throws {
        _ = try await LogCompactor(store: store).compact(account: 1)
    }

    /// Handles one HTTP request exactly as the listening server would.
    public func handle(_ request: SyncHTTPRequest) async -> SyncHTTPResponse {
        var fields = HTTPFields()
        // Every header the client sent (Authorization, Content-Type, Content-Encoding of a gzipped push…).
        for (name, value) in request.headers {
            if let field = HTTPField.Name(name) { fields[field] = value }
        }
        let head = HTTPRequest(
            method: HTTPRequest.Method(request.method) ?? .get, scheme: "http", authority: "sim", path: request.path,
            headerFields: fields)
        let body = RequestBody(buffer: ByteBuffer(bytes: request.body ?? Data()))
        let context = SyncRequestContext(source: ApplicationRequestContextSource(channel: channel, logger: logger))
        do {
            let response = try await responder.respond(to: Request(head: head, body: body), context: context)
            let collected = CollectedBody()
            try await response.body.write(BodyCollector(target: collected))
            return SyncHTTPResponse(status: Int(response.status.code), body: Data(collected.buffer.readableBytesView))
        } catch {
            return SyncHTTPResponse(
                status: 500, body: Data(#"{"error":{"code":"internal","message":"\#(error)"}}"#.utf8))
        }
    }

    /// Stores a catalog as an operator's upload would (devices that follow it fetch it after their
    /// next pull names its version).
    public func putCatalog(_ text: String) async throws {
        try await CatalogComposition(store).putCatalogJSON(text, uploadedBy: "simulation")
    }

    /// The highest sequence number the server holds from `device` (0: none).
    public func highestSeq(of device: String) async throws -> Int64 {
        try await store.highestSeq(account: 1, device: device) ?? 0
    }

    /// Every change in the server's log, in log order (for checks).
    public func log() async throws -> [String] {
        var all: [String] = []
        try await store.exportLog(account: 1, pageSize: 10_000) { all += $0 }
        return all
    }
}

final class CollectedBody: @unchecked Sendable {
    var buffer = ByteBuffer()
}

/// Collects a response body into memory.
struct BodyCollector: ResponseBodyWriter {
    let target: CollectedBody

    mutating func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        target.buffer.writeBuffer(&buffer)
    }

    consuming func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
