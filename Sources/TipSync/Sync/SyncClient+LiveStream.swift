import Foundation
import Synchronization
import TipSyncCore

/// The live stream that carries changes (`GET /v1/live?cursor=…`, protocol.md §9): the server writes
/// each page of the account's new changes on the open connection, and the client merges it and moves
/// its cursor — no request per change.
extension SyncClient {
    /// How a live stream ended, and so when the next one opens.
    enum LiveStreamEnd: Equatable {
        /// The transport cannot stream: long-poll instead.
        case cannotStream
        /// A page did not continue the client's cursor (or there was no cursor yet): open the next at once.
        case reopenNow
        /// The server ended a stream that had begun (a restart, a JWT's expiry, the stall bound): open
        /// the next after ``Backoff/delayAfterStreamEnded(draw:)``, so that an instance's devices do
        /// not all return in the same instant (protocol.md §17.3).
        case endedByServer
    }

    /// Follows one live stream until it ends, and says how it ended.
    ///
    /// Each page continues the one before (`from` is the cursor the client holds); a page that does
    /// not — the client's cursor moved some other way — ends the stream, and the next one opens at
    /// the client's cursor, where the server catches it up. A page, its cursor and nothing else are
    /// stored in one transaction, like a pull's.
    func followLiveStream() async throws -> LiveStreamEnd {
        guard let cursor = try replica.syncProgress.pullCursor else {
            try await pullAll()  // a stream starts at a cursor: the round that mints one
            return .reopenNow
        }
        let encoded = cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor
        guard let stream = try await openStream("/v1/live?limit=\(configuration.pullLimit)&cursor=\(encoded)")
        else { return .cannotStream }
        guard stream.status == 200 else {
            let body = try await Self.collect(stream.body)
            if stream.status == 400, Self.errorCode(body)?.code == ErrorCode.invalidCursor.rawValue {
                try replica.updateSyncProgress { $0.pullCursor = nil }  // start over: merging is idempotent
                return .reopenNow
            }
            throw Self.rejection(SyncHTTPResponse(status: stream.status, body: body, headers: stream.headers))
        }
        // URLSession on Linux does not end a silent stream: a watchdog does, after
        // `liveStreamSilence` seconds without a byte (heartbeats come every 15 s).
        let heard = HeardBytes()
        let end = try await withThrowingTaskGroup(of: LiveStreamEnd?.self) { group in
            group.addTask { try await self.readLiveStream(stream.body, heard: heard) }
            group.addTask {
                try await self.watchSilence(heard)
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard let end else { throw SyncClientError.unreachable("the live stream ended before it began") }
        return end
    }

    /// Reads the stream's events until it ends or a page does not continue the cursor; `nil` when the
    /// stream ended before it began (`event: ready`).
    func readLiveStream(_ body: AsyncThrowingStream<Data, any Error>, heard: HeardBytes) async throws
        -> LiveStreamEnd?
    {
        var events = ServerSentEvents()
        var began = false
        do {
            for try await piece in body {
                heard.pieces.add(1, ordering: .relaxed)
                for event in events.feed(piece) {
                    switch event.name {
                    case "ready":
                        began = true
                        publishStatus(connected: true)
                        noteLive(receiving: true)
                        try await followReadyCatalog(event.data)
                    case "changes":
                        guard try await mergeLivePage(event.data) else { return .reopenNow }
                    case "catalog":
                        try await followLiveCatalog(event.data)
                    default:
                        break  // events this client does not know are ignored (protocol.md §9)
                    }
                }
            }
        } catch let error as SyncClientError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw SyncClientError.unreachable("the live stream failed: \(error.localizedDescription)")
        }
        return began ? .endedByServer : nil
    }

    /// Throws once the stream has been silent for ``SyncConfiguration/liveStreamSilence`` seconds.
    func watchSilence(_ heard: HeardBytes) async throws {
        var seen = heard.pieces.load(ordering: .relaxed)
        while true {
            try await sleep(.seconds(configuration.liveStreamSilence))
            let now = heard.pieces.load(ordering: .relaxed)
            guard now != seen else {
                throw SyncClientError.unreachable(
                    "the live stream was silent for \(configuration.liveStreamSilence) s")
            }
            seen = now
        }
    }

    /// Merges one `event: changes` page; `false` when it does not continue the client's cursor (the
    /// stream is reopened there). A server that only announces news (`data: {}`) gets a pull.
    func mergeLivePage(_ data: String) async throws -> Bool {
        let page = try decode(PullResponse.self, Data(data.utf8))
        guard let from = page.from else {
            try await pullAll()  // notify-only: there is news, pull it
            return true
        }
        guard from == (try replica.syncProgress.pullCursor) else { return false }
        _ = try replica.applyRemote(page.changes) { $0.settle(after: page, reachesEnd: true) }
        publishStatus(synced: true)
        return true
    }

    /// `event: ready`'s `catalog` (revision 2.10): the served catalog's version when the stream
    /// opened, or `null` for none — what a device that reopened its stream without a pull follows. A
    /// `ready` without the member (an older server) asks `GET /v1/catalog`, answered `304` when
    /// nothing changed.
    func followReadyCatalog(_ data: String) async throws {
        guard configuration.followsServerCatalog else { return }
        guard case .object(let members) = try? JSONParser.parse(Data(data.utf8)) else { return }
        switch members["catalog"] {
        case .string(let tag)?: try await followCatalog(tag)
        case .null?: return
        default: try await followCatalog(nil)
        }
    }

    /// `event: catalog`: the version it names (or, from a server that names none, whatever the
    /// server holds now) is fetched when this client follows the server's catalog.
    func followLiveCatalog(_ data: String) async throws {
        guard configuration.followsServerCatalog else { return }
        struct CatalogEvent: Decodable { var catalog: String? }
        if let tag = (try? JSONCoding.decode(CatalogEvent.self, from: Data(data.utf8)))?.catalog {
            try await followCatalog(tag)
        } else {
            try await pullAll()
        }
    }

    /// Opens a streamed request with the current credential; asks the token provider once again when
    /// the server says the JWT expired. `nil`: the transport cannot stream.
    func openStream(_ path: String) async throws -> SyncHTTPStream? {
        var refreshed = false
        while true {
            var headers = ["Authorization": "Bearer \(try await currentToken())", "Accept": "text/event-stream"]
            headers[DeviceContext.headerName] = replica.deviceContext.headerValue
            let request = SyncHTTPRequest(
                method: "GET", path: path, headers: headers, timeout: TimeInterval(configuration.liveStreamSilence))
            let stream: SyncHTTPStream?
            do {
                stream = try await transport.stream(request)
            } catch let error as SyncClientError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                throw SyncClientError.unreachable("\(error.localizedDescription)")
            }
            guard let stream else { return nil }
            guard stream.status == 401 else { return stream }
            let body = try await Self.collect(stream.body)
            if Self.errorCode(body)?.code == ErrorCode.tokenExpired.rawValue, configuration.tokenProvider != nil {
                token = nil
                if !refreshed {
                    refreshed = true
                    continue
                }
                throw Self.rejection(SyncHTTPResponse(status: 401, body: body))
            }
            throw Self.refusedToken(body)
        }
    }

    /// A streamed body read whole (an error answer is short).
    static func collect(_ body: AsyncThrowingStream<Data, any Error>) async throws -> Data {
        var data = Data()
        do {
            for try await piece in body { data.append(piece) }
        } catch {
            throw SyncClientError.unreachable("\(error.localizedDescription)")
        }
        return data
    }
}

/// How many pieces a live stream has delivered (the silence watchdog reads it).
final class HeardBytes: Sendable {
    let pieces = Atomic<Int>(0)
}
