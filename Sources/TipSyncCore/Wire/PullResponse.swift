/// `GET /v1/pull` success body: the account's changes after the request's cursor, in log order.
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

    public init(
        changes: [Change], cursor: String, more: Bool, snapshot: Bool, serverTime: Int64, highestSeq: Int64? = nil,
        generation: String? = nil, catalog: String? = nil
    ) {
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
