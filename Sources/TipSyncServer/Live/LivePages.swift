import NIOCore
import Synchronization

/// The pages that live streams carrying changes write (`GET /v1/live?cursor=…`, protocol.md §9):
/// read from the store and encoded **once** per account and position, then written as the same
/// bytes to every stream of the account that is at that position. A change delivered to a
/// thousand devices of one account costs one store read and one encoding, not a thousand pulls.
///
/// A page is shared only between streams woken by the same news: every notification for the
/// account (``invalidate(account:)``) drops the shared read, so a stream never gets a page read
/// before the push that woke it. A stream that still got an older page (its read began before the
/// push) is woken again by that push's notification and reads on.
public final class LivePages: Sendable {
    /// One `event: changes` block and where it leaves the stream.
    public struct Page: Sendable {
        /// `event: changes\ndata: {…}\n\n`, ready to write; empty when the page has no changes.
        public var event: ByteBuffer
        /// The log position after the page (the request's position when it is empty).
        public var cursor: Int64
        /// More changes wait after this page: read the next one at once.
        public var more: Bool
        /// The number of changes in the page.
        public var count: Int
    }

    /// A read under way or done: for streams with `limit`, or for any stream whose limit holds it
    /// (`limit == nil`: a page that is everything after its position, primed by a push).
    private struct Shared {
        var read: Read
        var limit: Int?
        var count: Int

        /// A store read under way (or done), or a page a push handed over (no task for it).
        enum Read {
            case reading(Task<Page, any Error>)
            case ready(Page)
        }

        func serves(limit wanted: Int) -> Bool { limit.map { $0 == wanted } ?? (count <= wanted) }
    }

    /// Per account, the reads since its latest news, by position: streams a page behind the others
    /// (a busy account) share theirs too.
    private let shared = Mutex<[Int64: [Int64: Shared]]>([:])
    private let readCount = Atomic<Int>(0)

    public init() {}

    /// The account's log grew: later readers read again.
    func invalidate(account: Int64) {
        shared.withLock { _ = $0.removeValue(forKey: account) }
    }

    /// The page after `position` for `account`: the read already under way for the same position and
    /// news if there is one, else `read()` (which then serves every stream that asks meanwhile).
    func page(
        account: Int64, after position: Int64, limit: Int, read: @escaping @Sendable () async throws -> Page
    ) async throws -> Page {
        let source = shared.withLock { shared -> Shared.Read in
            if let existing = shared[account]?[position], existing.serves(limit: limit) { return existing.read }
            readCount.add(1, ordering: .relaxed)
            let task = Task { try await read() }
            shared[account, default: [:]][position] = Shared(read: .reading(task), limit: limit, count: 0)
            return .reading(task)
        }
        switch source {
        case .ready(let page):
            return page
        case .reading(let task):
            do {
                return try await task.value
            } catch {
                // A failed read is not shared with streams that come later.
                shared.withLock { shared in _ = shared[account]?.removeValue(forKey: position) }
                throw error
            }
        }
    }

    /// A push's own entries, for streams that were at the end of the log before it (`after`): they
    /// get the page without a store read. Call after ``invalidate(account:)`` for the same push.
    func prime(account: Int64, after position: Int64, page: Page) {
        shared.withLock { shared in
            shared[account, default: [:]][position] = Shared(read: .ready(page), limit: nil, count: page.count)
        }
    }

    /// Store reads started for live pages so far (tests: one per account and news).
    public var reads: Int { readCount.load(ordering: .relaxed) }

    /// The `event: changes` block for a page (protocol.md §9): the pull page's fields, without the
    /// per-device `highestSeq`, and with `from`, the cursor the page continues.
    static func event(_ page: PullPage, from: Int64, serverTime: Int64) -> Page {
        guard !page.changes.isEmpty else {
            return Page(event: ByteBuffer(), cursor: page.cursor, more: false, count: 0)
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
        return Page(event: event, cursor: page.cursor, more: page.more, count: page.changes.count)
    }
}
