package import NIOCore
package import TipSyncServerBasics

/// A full pull page of an account's state, kept compressed from one compaction to the next, so a
/// new device — or one far behind — is sent the state without the server reading and compressing
/// it again for every device (issue 58, item 4).
///
/// After ``LogCompactor`` compacts an account, the log from its beginning is the account's state
/// (protocol.md §8): it reads the full pages a new device's pulls would get
/// (``ChangeLogStore/statePages(account:)``), compresses each once (``DeflatedSegment``), and keeps
/// them (``ChangeLogStore/keepStatePages(_:account:builtFor:)``). A pull that accepts a compressed
/// answer and starts where a kept page starts is answered with it: the same bytes, once inflated,
/// as reading the log gives, because
/// - entries at or below a full page's last position change only when the account is compacted
///   again or erased: a page is used only while the account's latest compaction is the one it
///   was built after (``builtFor``), and erasure deletes the pages with the log;
/// - it is used only for a `limit` that reads the same page (``answers(limit:)``).
/// The last, partial page of the state is never kept: the log grows into it.
package struct KeptStatePage: Sendable, Hashable {
    /// The pages are those of pulls asking this `limit` (the largest a pull may ask by default, and
    /// what the Swift and JavaScript clients ask): at most this many changes each, and at most
    /// ``ChangeTexts/maxPageBytes`` of them.
    package static let pageLimit = 5000

    /// The cursor position the page follows (0: the log's beginning).
    package var after: Int64
    /// The position of its last change: the answer's cursor.
    package var last: Int64
    /// How many changes it holds.
    package var count: Int
    /// Whether it ended at ``ChangeTexts/maxPageBytes`` rather than at ``pageLimit`` changes.
    package var endedByBytes: Bool
    /// Its changes' texts, comma-separated as a page holds them (``ChangeTexts/joined``), compressed.
    package var segment: DeflatedSegment

    package init(after: Int64, last: Int64, count: Int, endedByBytes: Bool, segment: DeflatedSegment) {
        self.after = after
        self.last = last
        self.count = count
        self.endedByBytes = endedByBytes
        self.segment = segment
    }

    /// Whether a pull asking `limit` changes after ``after`` reads exactly this page from the log: it
    /// may hold this many, and would stop where this one stopped (at the same byte bound, or at the
    /// same count).
    package func answers(limit: Int) -> Bool {
        count <= limit && (endedByBytes || count == limit)
    }
}

/// The full pages of an account's log from its beginning, read in one transaction after a
/// compaction, before they are compressed and kept (``KeptStatePage``).
package struct StatePages: Sendable {
    /// One full page as read.
    package struct Page: Sendable {
        package var after: Int64
        package var last: Int64
        package var changes: ChangeTexts
        package var endedByBytes: Bool

        package init(after: Int64, last: Int64, changes: ChangeTexts, endedByBytes: Bool) {
            self.after = after
            self.last = last
            self.changes = changes
            self.endedByBytes = endedByBytes
        }
    }

    /// The account's latest compaction when they were read (the log position it compacted
    /// through); the pages are valid while it stays the latest.
    package var builtFor: Int64
    package var pages: [Page]

    package init(builtFor: Int64, pages: [Page]) {
        self.builtFor = builtFor
        self.pages = pages
    }

    /// The full pages of a whole log read in one snapshot (each entry's position and stored text,
    /// in log order), cut as a pull asking ``KeptStatePage/pageLimit`` cuts them
    /// (``ChangeTexts/admits(_:limit:)``): every page followed by at least one more entry.
    package init(builtFor: Int64, log: some Sequence<(position: Int64, text: ByteBuffer)>) {
        var pages: [Page] = []
        var page = Page(after: 0, last: 0, changes: ChangeTexts(), endedByBytes: false)
        for (position, text) in log {
            if !page.changes.admits(text.readableBytes, limit: KeptStatePage.pageLimit) {
                page.endedByBytes = page.changes.count < KeptStatePage.pageLimit
                pages.append(page)
                page = Page(after: page.last, last: page.last, changes: ChangeTexts(), endedByBytes: false)
            }
            page.changes.append(text)
            page.last = position
        }
        self.init(builtFor: builtFor, pages: pages)
    }
}
