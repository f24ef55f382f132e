/// The failures in a row that ``SyncClient/run()``'s backoff reads (protocol.md §17.3), and when they
/// start again from 0: only once the device is **live** again — its outbox pushed *and* other
/// devices' changes reaching it (a live stream delivered `event: ready`, or, without streams, a
/// round completed). A device whose pulls succeed while its streams fail, or whose stream opens while
/// its pushes are refused, keeps backing off rather than retrying every second.
struct FailuresInARow: Sendable, Equatable {
    /// Failures since the device was last live (`n` of §17.3).
    private(set) var count = 0
    /// Seconds waited since the first of them (`w` of §17.3).
    private(set) var waited = 0.0
    /// Whether this attempt has pushed the outbox.
    private(set) var pushed = false
    /// Whether this attempt receives other devices' changes.
    private(set) var receiving = false
    /// Whether this attempt began with a completed round (pushed, and pulled to the end).
    private(set) var completedRound = false

    /// A new attempt: nothing received yet, and pushed only if there is nothing to push.
    mutating func beginAttempt(outboxEmpty: Bool) {
        pushed = outboxEmpty
        receiving = false
        completedRound = false
    }

    /// The attempt's round completed; without streams that is live.
    mutating func noteRound(streams: Bool) {
        completedRound = true
        note(pushed: true, receiving: !streams)
    }

    /// One half of being live is done; when both are, the failures start again from 0. Whether the
    /// device is live now.
    @discardableResult
    mutating func note(pushed: Bool = false, receiving: Bool = false) -> Bool {
        self.pushed = self.pushed || pushed
        self.receiving = self.receiving || receiving
        guard self.pushed && self.receiving else { return false }
        count = 0
        waited = 0
        return true
    }

    /// An attempt failed and the client waited `delay` seconds before the next.
    mutating func failed(after delay: Double) {
        waited += delay
        count += 1
    }
}
