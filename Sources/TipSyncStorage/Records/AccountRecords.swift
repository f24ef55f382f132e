import TipSyncServerBasics

/// A device not seen since a time: what the console lists so an operator finds devices that stopped
/// syncing (a refused device is never seen: its requests do not sign in).
package struct QuietDevice: Sendable, Hashable {
    package var account: String
    package var device: String
    /// When it was last seen (milliseconds since 1970); `nil`: never.
    package var lastSeen: Int64?

    package init(account: String, device: String, lastSeen: Int64?) {
        self.account = account
        self.device = device
        self.lastSeen = lastSeen
    }
}

/// What the admin API, the CLI and the console show about an account: one row of a listing.
package struct AccountSummary: Sendable, Hashable, Codable {
    package var name: String
    /// Milliseconds since 1970; `nil` for accounts created before the server recorded it.
    package var createdAt: Int64?
    package var devices: Int
    /// Entries in the account's log now (after compaction).
    package var logEntries: Int

    package init(name: String, createdAt: Int64?, devices: Int, logEntries: Int) {
        self.name = name
        self.createdAt = createdAt
        self.devices = devices
        self.logEntries = logEntries
    }
}

/// One account in detail: its log's counters and every device.
package struct AccountDetails: Sendable, Hashable, Codable {
    package var name: String
    package var createdAt: Int64?
    /// Entries in the log now.
    package var logEntries: Int
    /// The highest log position handed out (the log's length before any compaction).
    package var logEnd: Int64
    /// Positions at or below this may have been dropped by compaction.
    package var compactedThrough: Int64
    /// When the account was last compacted (milliseconds), `nil` if never.
    package var lastCompactionAt: Int64?
    /// Log entries added since the last compaction (what automatic compaction counts).
    package var entriesSinceCompaction: Int64
    package var devices: [DeviceDetails]

    package init(
        name: String, createdAt: Int64?, logEntries: Int, logEnd: Int64, compactedThrough: Int64,
        lastCompactionAt: Int64?, entriesSinceCompaction: Int64, devices: [DeviceDetails]
    ) {
        self.name = name
        self.createdAt = createdAt
        self.logEntries = logEntries
        self.logEnd = logEnd
        self.compactedThrough = compactedThrough
        self.lastCompactionAt = lastCompactionAt
        self.entriesSinceCompaction = entriesSinceCompaction
        self.devices = devices
    }
}

/// A device of an account as the server knows it.
package struct DeviceDetails: Sendable, Hashable, Codable {
    package var name: String
    /// The highest `seq` stored from the device (0: none).
    package var highestSeq: Int64
    /// The last request the device made with a valid credential (milliseconds), `nil` if none
    /// recorded. Recorded within a few seconds, not on every request.
    package var lastSeen: Int64?
    /// Device tokens that are valid now.
    package var tokens: Int
    /// When its tokens were last revoked (JWTs issued before then are refused too).
    package var revokedAt: Int64?
    /// Holds a live stream or a long-poll open on the server instance that answered.
    package var live: Bool
    /// The log position its last pull reached (the cursor it was handed), `nil` if it never pulled.
    /// `logEnd` minus this is how far behind the log it is. Recorded within a few seconds.
    package var pulledThrough: Int64?
    /// What the device last reported of itself (header `TipSync-Context`, protocol.md §5):
    /// `platform=ios; appVersion=2.4.1; locale=fr-CA`; `nil` if it never did. Recorded within a few
    /// seconds.
    package var context: String?

    package init(
        name: String, highestSeq: Int64, lastSeen: Int64?, tokens: Int, revokedAt: Int64?, live: Bool = false,
        pulledThrough: Int64? = nil, context: String? = nil
    ) {
        self.context = context
        self.pulledThrough = pulledThrough
        self.name = name
        self.highestSeq = highestSeq
        self.lastSeen = lastSeen
        self.tokens = tokens
        self.revokedAt = revokedAt
        self.live = live
    }
}

/// An admin key as listed: never the key itself, which is shown once and stored as a hash.
package struct AdminKeyRecord: Sendable, Hashable, Codable {
    package var name: String
    package var createdAt: Int64

    package init(name: String, createdAt: Int64) {
        self.name = name
        self.createdAt = createdAt
    }
}

/// What the console's overview shows of the database.
package struct StoreOverview: Sendable, Hashable {
    package var accounts: Int
    package var devices: Int
    /// The database's size on disk.
    package var databaseBytes: Int64
    /// The most recently compacted accounts, newest first: name and when (milliseconds since 1970).
    package var recentCompactions: [RecentCompaction]

    package struct RecentCompaction: Sendable, Hashable {
        package var account: String
        package var at: Int64

        package init(account: String, at: Int64) {
            self.account = account
            self.at = at
        }
    }

    package init(accounts: Int, devices: Int, databaseBytes: Int64, recentCompactions: [RecentCompaction]) {
        self.accounts = accounts
        self.devices = devices
        self.databaseBytes = databaseBytes
        self.recentCompactions = recentCompactions
    }
}
