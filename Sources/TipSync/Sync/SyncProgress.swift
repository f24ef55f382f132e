import TipSyncCore

/// What the sync client knows of its exchange with the server: how much of the outbox the server
/// acknowledged, where to pull from, what it may have stored without answering, and the clock
/// correction. Kept in the replica's database so it survives restarts; the client changes it in one
/// transaction per server answer (``TipsReplica/updateSyncProgress(_:)``, or together with the
/// changes a pull page merges: ``TipsReplica/applyRemote(_:updatingSyncProgress:)``).
package struct SyncProgress: Sendable, Equatable {
    /// A push that got no answer: the server may have stored changes up to `seq`. `generation` is
    /// the server's cursor generation known when it was sent.
    package struct UncertainPush: Sendable, Equatable {
        package var seq: Int64
        package var generation: String?
    }

    /// The highest local sequence number the server has acknowledged.
    package private(set) var pushedSeq: Int64
    /// The highest sequence number the server ever acknowledged: ``pushedSeq`` drops when a restored
    /// server lost changes, this never does. Nothing at or below it is re-stamped (other devices
    /// may hold it).
    package private(set) var acknowledgedHighSeq: Int64
    /// The server's cursor generation from its latest answer (`nil` before any).
    package var serverGeneration: String?
    /// A push that got no answer, until an answer settles what it did.
    package var uncertainPush: UncertainPush?
    /// The server-minted cursor to pull after (`nil`: from the beginning).
    package var pullCursor: String?
    /// Milliseconds added to the device clock to match the server's.
    package var clockOffset: Int64
    /// Whether a pull has reached the end of the account's log at least once (protocol.md §17.1).
    /// Never goes back: a cursor the server no longer accepts re-pulls, but the device has synced.
    package var hasSynced: Bool
    /// Until when (milliseconds since 1970, corrected clock) tips are held for the first sync;
    /// set by the sync client as it starts while ``hasSynced`` is false.
    package var firstSyncHoldUntil: Int64?

    /// The first-sync hold this bookkeeping describes.
    package var firstSyncHold: FirstSyncHold { FirstSyncHold(hasSynced: hasSynced, until: firstSyncHoldUntil) }

    /// Bookkeeping as given; a new replica's is `SyncProgress()` (nothing pushed, pulled or held).
    package init(
        pushedSeq: Int64 = 0, acknowledgedHighSeq: Int64 = 0, serverGeneration: String? = nil,
        uncertainPush: UncertainPush? = nil, pullCursor: String? = nil, clockOffset: Int64 = 0,
        hasSynced: Bool = false, firstSyncHoldUntil: Int64? = nil
    ) {
        self.pushedSeq = pushedSeq
        self.acknowledgedHighSeq = max(acknowledgedHighSeq, pushedSeq)
        self.serverGeneration = serverGeneration
        self.uncertainPush = uncertainPush
        self.pullCursor = pullCursor
        self.clockOffset = clockOffset
        self.hasSynced = hasSynced
        self.firstSyncHoldUntil = firstSyncHoldUntil
    }

    /// Sets the acknowledged mark: raised by acknowledgements, lowered when the server reports it
    /// lost changes (a restored backup), which are then pushed again with their stamps.
    package mutating func setPushed(through seq: Int64) {
        pushedSeq = seq
        acknowledgedHighSeq = max(acknowledgedHighSeq, seq)
    }

    /// Remembers a push through `seq` that got no answer, with the server generation known now.
    package mutating func recordUncertainPush(through seq: Int64) {
        uncertainPush = UncertainPush(seq: max(uncertainPush?.seq ?? 0, seq), generation: serverGeneration)
    }

    /// What an answer saying the server holds this device's log through `held` settles: its
    /// generation, and an earlier unanswered push that it covers.
    package mutating func noteServer(holds held: Int64, generation: String?) {
        if let generation { serverGeneration = generation }
        if let uncertain = uncertainPush, held >= uncertain.seq { uncertainPush = nil }
    }

    /// What merging `page` settles, in the transaction that merges its changes (protocol.md §7,
    /// §9.1, §17.1): the cursor after it; that this device has synced, once a page reaches the end
    /// of the account's log (`reachesEnd`: a pull's last page, or any live page, which continues
    /// one); the clock offset measured with it; and what the page says of this device's pushes
    /// (`highestSeq`, on pull pages only). Returns whether the server lost pushes it had
    /// acknowledged (a restored backup): they are pushed again, stamps unchanged (a push racing the
    /// pull can make it look so too; pushing again is then a no-op). The one place pulls and live
    /// streams settle a page.
    package mutating func settle(after page: PullResponse, reachesEnd: Bool, clockOffset offset: Int64? = nil) -> Bool {
        if let offset { clockOffset = offset }
        pullCursor = page.cursor
        if reachesEnd { hasSynced = true }
        guard let held = page.highestSeq else { return false }
        noteServer(holds: held, generation: page.generation)
        let lost = held < pushedSeq
        if held != pushedSeq { setPushed(through: held) }
        return lost
    }

    /// Before re-stamping after `clock_skew`: the highest sequence number whose stamps must stay.
    /// A push that got no answer and is not among what the server holds (`held`) never arrived — if
    /// the server's generation is the one known when it was sent (the server has lost nothing
    /// since), and it is forgotten. Otherwise the server may have stored it, other devices pulled
    /// it, and a restore lost it: re-stamping it then would make replicas disagree, so it keeps its
    /// stamps and waits until the server's clock reaches them.
    package mutating func keptThroughUncertainPush(held: Int64, serverGeneration generation: String?) -> Int64 {
        guard let uncertain = uncertainPush, uncertain.seq > held else { return 0 }
        if let known = uncertain.generation, known == generation {
            uncertainPush = nil
            return 0
        }
        return uncertain.seq
    }
}
