/// `GET /v1/pull` success body: the account's changes after the request's cursor, in log order. Also
/// the data of a live stream's `event: changes` when the stream carries changes (protocol.md §9): then
/// ``from`` names the cursor the page continues and ``highestSeq`` is absent.
public struct PullResponse: Sendable, Hashable, Codable {
    public var changes: [Change]
    /// Pass this as `cursor` on the next pull. Opaque: minted by the server, never computed by clients.
    public var cursor: String
    /// More changes are waiting: pull again at once.
    public var more: Bool
    /// The request's cursor predated a compaction: this page starts a full snapshot (from the first
    /// retained change). Merging is idempotent, so the client just applies it and continues.
    public var snapshot: Bool
    /// The server's clock, milliseconds since 1970.
    public var serverTime: Int64
    /// The highest sequence number the server holds from the device that pulled (0: none). Lower than
    /// what the device believes it pushed means the server lost changes (a restored backup): the device
    /// pushes again from there. Absent from servers before it existed.
    public var highestSeq: Int64?
    /// The server database's cursor generation (see ``PushResponse/generation``).
    public var generation: String?
    /// The uploaded catalog's version (its `ETag`, protocol.md §16); absent when none was uploaded.
    /// A device that follows the server's catalog fetches `GET /v1/catalog` when it changes.
    public var catalog: String?
    /// On a live stream's page only: the cursor this page continues (the stream's previous page's
    /// ``cursor``, or the cursor the stream was opened with). A device merges the page only when it
    /// equals the cursor it holds.
    public var from: String?

    public init(
        changes: [Change], cursor: String, more: Bool, snapshot: Bool, serverTime: Int64, highestSeq: Int64? = nil,
        generation: String? = nil, catalog: String? = nil, from: String? = nil
    ) {
        self.from = from
        self.catalog = catalog
        self.generation = generation
        self.changes = changes
        self.cursor = cursor
        self.more = more
        self.snapshot = snapshot
        self.serverTime = serverTime
        self.highestSeq = highestSeq
    }
}
