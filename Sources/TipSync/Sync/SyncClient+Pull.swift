import Foundation
import TipSyncCore

/// What comes in: pages pulled after the server-minted cursor and merged, the next ones requested
/// and decoded while one is merged.
extension SyncClient {
    /// Pulls page after page until the server has nothing more. With
    /// ``SyncConfiguration/prefetchPages`` the pages flow through three stages at once: while page
    /// *n* is merged, page *n+1* is decoded and page *n+2* is requested (as soon as page *n+1*'s
    /// cursor is read, before its changes are decoded). The cursor is still saved only once its
    /// page is merged, so a crash or an error loses nothing and re-pulls at most the pages in flight.
    func pullAll(wait: Int = 0) async throws {
        var waitNow = wait
        var prefetched: Task<PulledPage, any Error>?
        defer { prefetched?.cancel() }
        while true {
            let pulled: PulledPage
            if let next = prefetched {
                prefetched = nil
                pulled = try await next.value
            } else {
                pulled = try await read(try await request(after: try replica.syncProgress.pullCursor, wait: waitNow))
            }
            guard let page = pulled.page else {
                pulled.next?.cancel()
                if Self.errorCode(pulled.response.body)?.code == ErrorCode.invalidCursor.rawValue {
                    try replica.updateSyncProgress { $0.pullCursor = nil }  // start over: merging is idempotent
                    continue
                }
                throw Self.rejection(pulled.response)
            }
            if page.more, configuration.prefetchPages {
                // The next page was requested from this page's cursor as read before the decode;
                // anything else (a page that decoded differently) is requested again.
                if let next = pulled.next, pulled.nextCursor == page.cursor {
                    prefetched = Task { try await self.read(try await next.value) }
                } else {
                    pulled.next?.cancel()
                    prefetched = Task { try await self.read(try await self.request(after: page.cursor, wait: 0)) }
                }
            } else {
                pulled.next?.cancel()
            }
            // The page's changes, the cursor after them and what the page says of our pushes: one
            // transaction, so a crash or an error loses nothing and re-pulls at most the pages in flight.
            let offset = clockCorrection(serverTime: page.serverTime, sent: pulled.sent)
            let settle: @Sendable (inout SyncProgress) -> Bool = { progress in
                progress.settle(after: page, reachesEnd: !page.more, clockOffset: offset)
            }
            let lostPushes: Bool
            if prefetched == nil {
                lostPushes = try replica.applyRemote(page.changes, updatingSyncProgress: settle)
            } else {
                // Off the actor, so the prefetch can send its request meanwhile.
                let replica = replica
                lostPushes = try await Task.detached {
                    try replica.applyRemote(page.changes, updatingSyncProgress: settle)
                }.value
            }
            if !page.more { publishStatus(connected: true, synced: true) }
            if configuration.followsServerCatalog, let tag = page.catalog { try await followCatalog(tag) }
            if lostPushes { try await pushAll() }
            guard page.more else { return }
            waitNow = 0
        }
    }

    /// One pull answer: the response, when its request was sent, and the page when it is one (200).
    struct PulledPage: Sendable {
        var response: SyncHTTPResponse
        var sent: Date
        var page: PullResponse?
        /// The page after this one, requested from ``nextCursor`` while this one was decoded.
        var next: Task<PullAnswer, any Error>?
        var nextCursor: String?
    }

    /// A pull's response and when its request was sent.
    struct PullAnswer: Sendable {
        var response: SyncHTTPResponse
        var sent: Date
    }

    /// Requests the page after `cursor`.
    func request(after cursor: String?, wait: Int) async throws -> PullAnswer {
        var path = "/v1/pull?limit=\(configuration.pullLimit)"
        if let cursor {
            path += "&cursor=\(cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor)"
        }
        if wait > 0 { path += "&wait=\(wait)" }
        let (response, sent) = try await send("GET", path, timeout: TimeInterval(wait + 30))
        return PullAnswer(response: response, sent: sent)
    }

    /// Decodes a pull answer (off the actor, so a page being merged and the next one being decoded
    /// use both cores); with ``SyncConfiguration/prefetchPages``, first requests the page after it
    /// when it says there is more.
    func read(_ answer: PullAnswer) async throws -> PulledPage {
        var pulled = PulledPage(response: answer.response, sent: answer.sent)
        guard answer.response.status == 200 else { return pulled }
        let body = answer.response.body
        guard configuration.prefetchPages else {
            pulled.page = try Self.decode(PullResponse.self, body)
            return pulled
        }
        if let continuation = PullResponse.continuation(of: body), continuation.more {
            pulled.nextCursor = continuation.cursor
            pulled.next = Task { try await self.request(after: continuation.cursor, wait: 0) }
        }
        do {
            pulled.page = try await Task.detached { try Self.decode(PullResponse.self, body) }.value
        } catch {
            pulled.next?.cancel()
            throw error
        }
        return pulled
    }
}
