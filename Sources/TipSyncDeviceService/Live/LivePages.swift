import Dispatch
package import NIOCore
import Synchronization
import TipSyncNetworking
import TipSyncServerBasics
package import TipSyncStorage

/// The pages that live streams carrying changes write (`GET /v1/live?cursor=…`, protocol.md §9):
/// read from the store and encoded **once** per account and position, then written as the same
/// bytes to every stream of the account that is at that position. A change delivered to a
/// thousand devices of one account costs one store read and one encoding, not a thousand pulls.
///
/// Two kinds of page:
/// - **Pushed**: a push on this instance hands over its own entries (``news(account:primed:)``).
///   They are exact log content, so they are kept across later news (the last few seconds' worth):
///   a stream that fell a few pushes behind chains them without a store read, and writes them
///   without waiting (``ready(account:after:limit:)``).
/// - **Read**: a store read, shared only between streams woken by the same news: every news for the
///   account drops them, so a stream never gets a page read before the push that woke it. A stream
///   that still got an older page (its read began before the push) is woken again by that push's
///   news and reads on.
///
/// A page's ``Page/more`` says whether the stream must read on. A pushed page says `false` in its
/// bytes (nothing came after it when it was pushed), but the account's log may have grown since —
/// pushes whose news arrive in another order than their commits, news from other instances — so
/// ``Page/more`` is set from what this instance knows of the log's end: the highest pushed page's
/// end while every news since came with its page, or the end a store read found when no news came
/// during it. Unknown, the stream reads on until a store read finds nothing more.
package final class LivePages: Sendable {
    /// One `event: changes` block and where it leaves the stream.
    package struct Page: Sendable {
        /// `event: changes\ndata: {…}\n\n`, ready to write; empty when the page has no changes.
        package var event: ByteBuffer
        /// ``event`` framed as an HTTP/1.1 chunk (``HTTPChunk``), once for every stream that writes
        /// it on its connection's pipeline; ``event`` is a view of its bytes.
        package var chunk: ByteBuffer
        /// The log position after the page (the request's position when it is empty).
        package var cursor: Int64
        /// More changes wait after this page: read the next one at once.
        package var more: Bool
        /// The number of changes in the page.
        package var count: Int
    }

    /// A store read under way or done, for streams with `limit`.
    private struct Read {
        var state: State
        var limit: Int

        enum State {
            case reading(Task<Page, any Error>)
            case done(Page)
        }
    }

    /// A pushed page and when it was handed over.
    private struct Pushed {
        var page: Page
        var at: UInt64
    }

    /// What this instance knows of one account's log.
    private struct Account {
        /// Store reads since the latest news, by position.
        var reads: [Int64: Read] = [:]
        /// Pages pushes on this instance handed over, by the position before them.
        var pushed: [Int64: Pushed] = [:]
        /// The log's end as far as this instance knows (`nil`: unknown).
        var end: Int64?
        /// News so far (a store read during which news came cannot tell the end).
        var news: UInt64 = 0

        /// `page` with ``Page/more`` set when the log is known to go on after it.
        func adjusted(_ page: Page) -> Page {
            var page = page
            if let end, page.cursor < end { page.more = true }
            return page
        }

        /// Keeps at most ``LivePages/readsKept`` finished reads, those furthest along the log (where
        /// streams that share pages are: at its end). Streams at many distinct positions — one
        /// device's non-reading streams at distinct cursors kept every page they read, 1.4 GB — read
        /// their own pages instead of pinning them here.
        mutating func keepFewReads() {
            let done = reads.filter { if case .done = $0.value.state { true } else { false } }.keys.sorted()
            for position in done.dropLast(LivePages.readsKept) { reads[position] = nil }
        }

        /// The pushed page after `position`; it ends the catch-up only at the known end of the log.
        /// A push larger than a page may be (its count, or ``ChangeTexts/maxPageBytes``) is read from
        /// the store in pages instead.
        func pushedPage(after position: Int64, limit: Int) -> Page? {
            guard let pushed = pushed[position], pushed.page.count <= limit,
                pushed.page.event.readableBytes <= ChangeTexts.maxPageBytes
            else { return nil }
            var page = pushed.page
            page.more = end.map { page.cursor < $0 } ?? true
            return page
        }
    }

    /// Pushed pages kept per account: at most this many, none handed over more than
    /// ``pushedLifetime`` nanoseconds before the account's latest.
    static let pushedKept = 32
    /// Finished store reads kept per account (each at most ``ChangeTexts/maxPageBytes``).
    static let readsKept = 4
    package static let pushedLifetime: UInt64 = 2_000_000_000

    private let accounts = Mutex<[Int64: Account]>([:])
    private let readCount = Atomic<Int>(0)
    /// Monotonic nanoseconds (when pushed pages were handed over).
    private let now: @Sendable () -> UInt64

    package init(now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }) {
        self.now = now
    }

    /// The account's log grew. `primed`: a push on this instance, with its page and the position
    /// before it; `nil`: news without a page (another instance's push). Drops the store reads.
    package func news(account: Int64, primed: (after: Int64, page: Page)?) {
        let at = now()
        accounts.withLock { accounts in
            let known = accounts[account] != nil
            var state = accounts[account] ?? Account()
            state.news &+= 1
            state.reads = [:]
            guard let primed else {
                state.end = nil
                accounts[account] = state
                return
            }
            state.pushed[primed.after] = Pushed(page: primed.page, at: at)
            // Known when it was before, or when nothing was known of the account: no news reached
            // this instance since its streams opened, and their opening reads saw every commit
            // before this push.
            state.end = known ? state.end.map { max($0, primed.page.cursor) } : primed.page.cursor
            state.pushed = state.pushed.filter { at &- $0.value.at < Self.pushedLifetime }
            if state.pushed.count > Self.pushedKept {
                for key in state.pushed.keys.sorted().prefix(state.pushed.count - Self.pushedKept) {
                    state.pushed[key] = nil
                }
            }
            accounts[account] = state
        }
    }

    /// No stream or long-poll of the account is left: forget it.
    func forget(account: Int64) {
        accounts.withLock { _ = $0.removeValue(forKey: account) }
    }

    /// The page after `position` for `account`: a pushed page, the read already under way for the
    /// same position and news if there is one, else `read()` (which then serves every stream that
    /// asks meanwhile).
    func page(
        account: Int64, after position: Int64, limit: Int, read: @escaping @Sendable () async throws -> Page
    ) async throws -> Page {
        enum Source {
            case ready(Page)
            case reading(Task<Page, any Error>, news: UInt64)
        }
        let source = accounts.withLock { accounts -> Source in
            var state = accounts[account] ?? Account()
            defer { accounts[account] = state }
            if let page = state.pushedPage(after: position, limit: limit) { return .ready(page) }
            if let existing = state.reads[position], existing.limit == limit {
                switch existing.state {
                case .done(let page): return .ready(state.adjusted(page))
                case .reading(let task): return .reading(task, news: state.news)
                }
            }
            readCount.add(1, ordering: .relaxed)
            let task = Task { try await read() }
            state.reads[position] = Read(state: .reading(task), limit: limit)
            return .reading(task, news: state.news)
        }
        switch source {
        case .ready(let page):
            return page
        case .reading(let task, let news):
            do {
                let page = try await task.value
                return accounts.withLock { accounts in
                    guard var state = accounts[account] else { return page }
                    if let entry = state.reads[position], case .reading(let current) = entry.state, current == task {
                        // Streams that ask later take it without waiting.
                        state.reads[position]?.state = .done(page)
                        state.keepFewReads()
                    }
                    // Nothing more, and no news came while it read: the log's end.
                    if !page.more, state.news == news { state.end = max(state.end ?? page.cursor, page.cursor) }
                    accounts[account] = state
                    return state.adjusted(page)
                }
            } catch {
                // A failed read is not shared with streams that come later.
                accounts.withLock { accounts in
                    if let entry = accounts[account]?.reads[position], case .reading(let current) = entry.state,
                        current == task
                    {
                        accounts[account]?.reads[position] = nil
                    }
                }
                throw error
            }
        }
    }

    /// The page after `position` for `account` when it is at hand — pushed, or read and done — with
    /// no store read and no wait (`nil` otherwise; then ``page(account:after:limit:read:)``).
    package func ready(account: Int64, after position: Int64, limit: Int) -> Page? {
        accounts.withLock { accounts in
            guard let state = accounts[account] else { return nil }
            if let page = state.pushedPage(after: position, limit: limit) { return page }
            guard let read = state.reads[position], read.limit == limit, case .done(let page) = read.state else {
                return nil
            }
            return state.adjusted(page)
        }
    }

    /// A push's page for ``news(account:primed:)``: its appended entries, and the position
    /// before them (`nil` when it appended nothing, or the generation is unknown).
    package static func primed(_ appended: AppendedEntries?, generation: String?, serverTime: Int64)
        -> (after: Int64, page: Page)?
    {
        guard let appended, let generation, !appended.bodies.isEmpty else { return nil }
        let page = PullPage(
            bodies: appended.bodies, cursor: appended.last, more: false, snapshot: false, logEnd: appended.last,
            generation: generation)
        return (appended.first - 1, event(page, from: appended.first - 1, serverTime: serverTime))
    }

    /// Store reads started for live pages so far (tests: one per account and news).
    package var reads: Int { readCount.load(ordering: .relaxed) }

    /// The `event: changes` block for a page (protocol.md §9): the pull page's fields, without the
    /// per-device `highestSeq`, and with `from`, the cursor the page continues.
    static func event(_ page: PullPage, from: Int64, serverTime: Int64) -> Page {
        guard !page.changes.isEmpty else {
            return Page(event: ByteBuffer(), chunk: ByteBuffer(), cursor: page.cursor, more: false, count: 0)
        }
        var tail = #"],"cursor":"\#(page.generation).\#(page.cursor)","from":"\#(page.generation).\#(from)","#
        tail += #""generation":"\#(page.generation)","more":\#(page.more),"serverTime":\#(serverTime),"#
        tail += #""snapshot":\#(page.snapshot)}\#n\#n"#
        let head = #"event: changes\#ndata: {"changes":["#
        var event = ByteBuffer()
        event.reserveCapacity(head.utf8.count + page.changes.joined.readableBytes + tail.utf8.count)
        event.writeString(head)
        event.writeImmutableBuffer(page.changes.joined)
        event.writeString(tail)
        let (chunk, content) = HTTPChunk.frame(event)
        return Page(event: content, chunk: chunk, cursor: page.cursor, more: page.more, count: page.changes.count)
    }
}
